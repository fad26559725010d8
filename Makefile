# The two commands of the README: `make run` and `make test`. Both install missing
# Debian packages first, then configure and build with CMake (Release by default).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test test-asan fuzz bench clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@$(MAKE) --no-print-directory deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/tilesim run

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer, in its own build folder,
# then 30 s of each libFuzzer target (make fuzz).
test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILESIM_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30  # and 30 s of each fuzzer

# libFuzzer on every input parser (tests/fuzz/README.md), FUZZ_SECONDS each (default 60),
# starting from the repository's own inputs; findings land in build-fuzz/findings/.
FUZZ_SECONDS ?= 60
fuzz:
	@bash scripts/install-deps.sh libclang-rt-14-dev
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DTILESIM_FUZZ=ON \
	  -DTILESIM_WITH_MPI=OFF -DTILESIM_BUILD_BENCH=OFF -DTILESIM_MARCH=
	cmake --build build-fuzz -j $(JOBS)
	bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	bash bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-fuzz
