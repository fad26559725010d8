// Where the hardware puts a thread-block cluster's blocks, and how many clusters fit at once.
// A cluster runs within one GPC; which SMs form a GPC is not published, and how many clusters
// of a size can be resident together follows from it (a GPC holds only whole clusters).
//   occupancy rows: cudaOccupancyMaxActiveClusters for cluster sizes 1..16 at 1 and 2 blocks
//                   per SM (their shared memory forces it)
//   block rows:     a launch of `waves` x that many clusters, each block spinning `spin_us`,
//                   stamping %smid, %clusterid.x, %cluster_ctarank and %globaltimer at start/end:
//                   clusters sharing a GPC show as SMs that appear together in one cluster
//   plain rows:     the same launches of 1 and 2 blocks per SM without a cluster attribute
//                   (cluster 0): where the block scheduler puts an ordinary grid's blocks
// Prints CSV: kind,cluster,per_sm,max_clusters,launch,block,sm,cluster_id,rank,start_ns,end_ns
//   nvcc -O3 -arch=sm_90 -o cluster_map calibration/kernels/cluster_map.cu
//   ./cluster_map [--spin-us 40] [--waves 3]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common.cuh"

namespace {

__device__ __forceinline__ unsigned cluster_id_x() {
  unsigned r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Each block records where it ran and spins until `spin_ns` after its start.
__global__ void stamp(unsigned long long* out, unsigned long long spin_ns) {
  extern __shared__ int pad[];
  const unsigned long long t0 = globaltimer();
  if (threadIdx.x == 0) {
    pad[0] = 1;
    while (globaltimer() - t0 < spin_ns) {
    }
    unsigned long long* r = out + 5ull * blockIdx.x;
    r[0] = smid();
    r[1] = cluster_id_x();
    r[2] = cluster_rank();
    r[3] = t0;
    r[4] = globaltimer();
  }
}

// The shared memory that leaves room for exactly `per_sm` blocks on one SM.
size_t smem_for(int per_sm, const cudaDeviceProp& p) {
  const size_t sm_bytes = p.sharedMemPerMultiprocessor;
  return std::min<size_t>(p.sharedMemPerBlockOptin, sm_bytes / per_sm - 2048);
}

cudaLaunchConfig_t config(int blocks, int cluster, size_t smem, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(blocks, 1, 1);
  c.blockDim = dim3(128, 1, 1);
  c.dynamicSmemBytes = smem;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  c.attrs = attr;
  c.numAttrs = 1;
  return c;
}

// Prints a launch's block rows, times from its first block's start.
void print_blocks(const char* kind, int cluster, int per_sm, int max_clusters, int launch, int blocks,
                  const unsigned long long* out) {
  std::vector<unsigned long long> h(5ull * blocks);
  CUDA_CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
  unsigned long long t_min = ~0ull;
  for (int b = 0; b < blocks; ++b) t_min = std::min(t_min, h[5ull * b + 3]);
  for (int b = 0; b < blocks; ++b) {
    const unsigned long long* r = &h[5ull * b];
    printf("%s,%d,%d,%d,%d,%d,%llu,%llu,%llu,%llu,%llu\n", kind, cluster, per_sm, max_clusters, launch, b, r[0], r[1],
           r[2], r[3] - t_min, r[4] - t_min);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int spin_us = 40, waves = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--spin-us")) spin_us = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--waves")) waves = atoi(argv[i + 1]);
  }
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  CUDA_CHECK(cudaFuncSetAttribute(stamp, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CUDA_CHECK(cudaFuncSetAttribute(stamp, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(p.sharedMemPerBlockOptin)));
  printf("kind,cluster,per_sm,max_clusters,launch,block,sm,cluster_id,rank,start_ns,end_ns\n");
  const int sizes[] = {1, 2, 3, 4, 6, 8, 9, 12, 16};
  unsigned long long* out = nullptr;
  CUDA_CHECK(cudaMalloc(&out, 5ull * 8 * 64 * p.multiProcessorCount * sizeof(unsigned long long)));
  for (int per_sm : {1, 2}) {
    const size_t smem = smem_for(per_sm, p);
    for (int cl : sizes) {
      cudaLaunchAttribute attr[1];
      cudaLaunchConfig_t c = config(cl, cl, smem, attr);
      int max_clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&max_clusters, stamp, &c) != cudaSuccess) {
        cudaGetLastError();
        printf("occupancy,%d,%d,-1,,,,,,,\n", cl, per_sm);
        continue;
      }
      printf("occupancy,%d,%d,%d,,,,,,,\n", cl, per_sm, max_clusters);
      if (max_clusters <= 0) continue;
      const int blocks = max_clusters * cl * waves;
      c = config(blocks, cl, smem, attr);
      for (int launch = 0; launch < 2; ++launch) {
        cudaError_t e = cudaLaunchKernelEx(&c, stamp, out, static_cast<unsigned long long>(spin_us) * 1000ull);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {  // a size the hardware refuses: say so and go on with the others
          fprintf(stderr, "cluster %d per_sm %d: %s\n", cl, per_sm, cudaGetErrorString(e));
          cudaGetLastError();
          break;
        }
        print_blocks("block", cl, per_sm, max_clusters, launch, blocks, out);
      }
    }
  }
  // The same blocks launched without a cluster attribute (<<<>>>, as Triton and CUTLASS 3's 1x1x1
  // kernels launch): rows "plain" with cluster 0, max_clusters the grid's blocks per wave.
  for (int per_sm : {1, 2}) {
    const size_t smem = smem_for(per_sm, p);
    const int blocks = per_sm * p.multiProcessorCount * waves;
    for (int launch = 0; launch < 2; ++launch) {
      stamp<<<blocks, 128, smem>>>(out, static_cast<unsigned long long>(spin_us) * 1000ull);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      print_blocks("plain", 0, per_sm, per_sm * p.multiProcessorCount, launch, blocks, out);
    }
  }
  CUDA_CHECK(cudaFree(out));
  return 0;
}
