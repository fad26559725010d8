# The explorer's manual mode (docs/explore.md) prices a user's click order in the page itself,
# with the very L2 code `tilesim run` uses: models/cache and sim/tools/explore/replay.cpp
# compiled to WebAssembly by clang for wasm32-wasi (Debian's wasi-libc and libc++ for wasm32),
# embedded into tilesim as a byte array that the page receives base64-encoded
# (sim/tools/explore/wasm_module.hpp). Included from CMakeLists.txt (which keeps
# sim/tools/explore/wasm/, the module's C ABI, out of the native library); sets
# TILESIM_EXPLORE_WASM_CPP, the source to add to tilesim_tools, and TILESIM_HAVE_EXPLORE_WASM.
#
# Optional: without its toolchain (or with -DTILESIM_WITH_EXPLORE_WASM=OFF) the rest of tilesim
# builds, TILESIM_EXPLORE_WASM_CPP is sim/tools/explore/wasm_missing.cpp, and `tilesim explore`
# stops with a one-line error (exit code 2) that names what the build lacked.
#
# Each source is compiled once, by its own rule with a depfile, so the module (a minute of
# clang for l2.cpp) is rebuilt only when one of its sources or headers changes.

option(TILESIM_WITH_EXPLORE_WASM "Build the explorer's WebAssembly module when its toolchain is found" ON)
find_program(TILESIM_WASM_CXX NAMES clang++-14 clang++
             DOC "clang++ that targets wasm32-wasi (builds the explorer's WebAssembly module)")
set(TILESIM_WASI_LIBCXX_INCLUDE "/usr/lib/llvm-14/include/wasm32-wasi/c++/v1" CACHE PATH
    "libc++ headers for wasm32-wasi (Debian's libc++-14-dev-wasm32)")
set(TILESIM_WASI_INCLUDE "/usr/include/wasm32-wasi" CACHE PATH "wasi-libc headers (Debian's wasi-libc)")
set(TILESIM_WASI_LIB "/usr/lib/wasm32-wasi" CACHE PATH
    "wasi-libc, libc++ and libc++abi for wasm32-wasi (Debian's wasi-libc, libc++-14-dev-wasm32, libc++abi-14-dev-wasm32)")
# models/arch.hpp includes yaml-cpp's header (declarations only; nothing of it is linked).
find_path(TILESIM_WASM_YAML_INCLUDE yaml-cpp/yaml.h DOC "folder holding yaml-cpp/yaml.h")

set(_wasm_packages "clang-14 lld-14 wasi-libc libc++-14-dev-wasm32 libc++abi-14-dev-wasm32 libclang-rt-14-dev-wasm32")
set(_wasm_missing "")
if(NOT TILESIM_WASM_CXX)
  list(APPEND _wasm_missing "clang++")
else()
  # The compiler-rt builtins and wasm-ld that clang would use for wasm32-wasi: clang answers
  # with a bare name or a path that does not exist when they are missing.
  execute_process(COMMAND ${TILESIM_WASM_CXX} --target=wasm32-wasi -print-libgcc-file-name
                  OUTPUT_VARIABLE _wasm_rt OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${TILESIM_WASM_CXX} --target=wasm32-wasi -print-prog-name=wasm-ld
                  OUTPUT_VARIABLE _wasm_ld OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  foreach(f IN ITEMS "${_wasm_rt}" "${_wasm_ld}")
    if(NOT IS_ABSOLUTE "${f}" OR NOT EXISTS "${f}")
      list(APPEND _wasm_missing "${f} (from ${TILESIM_WASM_CXX})")
    endif()
  endforeach()
endif()
foreach(f IN ITEMS "${TILESIM_WASI_LIBCXX_INCLUDE}/vector" "${TILESIM_WASI_INCLUDE}/stdlib.h"
                   "${TILESIM_WASI_LIB}/libc.a" "${TILESIM_WASI_LIB}/libc++.a" "${TILESIM_WASI_LIB}/libc++abi.a")
  if(NOT EXISTS "${f}")
    list(APPEND _wasm_missing "${f}")
  endif()
endforeach()
if(NOT TILESIM_WASM_YAML_INCLUDE)
  list(APPEND _wasm_missing "yaml-cpp/yaml.h")
endif()
if(NOT TILESIM_WITH_EXPLORE_WASM)
  set(_wasm_why "it was configured with -DTILESIM_WITH_EXPLORE_WASM=OFF")
elseif(_wasm_missing)
  string(REPLACE ";" ", " _wasm_missing "${_wasm_missing}")
  # No ';' in the text: it becomes a compile definition, and CMake lists split on ';'.
  string(CONCAT _wasm_why
         "its toolchain, a clang that targets wasm32-wasi with wasi-libc and libc++, was incomplete "
         "(missing: ${_wasm_missing}). On Debian, install ${_wasm_packages} (scripts/install-deps.sh "
         "does), or set TILESIM_WASM_CXX, TILESIM_WASI_LIBCXX_INCLUDE, TILESIM_WASI_INCLUDE and "
         "TILESIM_WASI_LIB, then configure and build again")
endif()
if(DEFINED _wasm_why)
  set(TILESIM_HAVE_EXPLORE_WASM OFF)
  set(TILESIM_EXPLORE_WASM_CPP ${CMAKE_SOURCE_DIR}/sim/tools/explore/wasm_missing.cpp)
  set_property(SOURCE ${TILESIM_EXPLORE_WASM_CPP} APPEND PROPERTY COMPILE_DEFINITIONS
               "TILESIM_EXPLORE_WASM_MISSING=\"${_wasm_why}\"")
  message(STATUS "tilesim: without the explorer's WebAssembly module (cmake/explore_wasm.cmake): ${_wasm_why}. "
                 "Everything else builds; `tilesim explore` says this and stops.")
  return()
endif()
set(TILESIM_HAVE_EXPLORE_WASM ON)

set(_wasm_dir ${CMAKE_BINARY_DIR}/explore_wasm)
# Only the wasm headers, clang's own and yaml-cpp's are visible (-nostdlibinc drops
# /usr/include, whose glibc headers would otherwise fill in for anything wasi-libc lacks):
# yaml-cpp is reached through a link to its folder alone.
file(MAKE_DIRECTORY ${_wasm_dir}/include)
file(CREATE_LINK ${TILESIM_WASM_YAML_INCLUDE}/yaml-cpp ${_wasm_dir}/include/yaml-cpp SYMBOLIC)

# -fno-exceptions: the L2 model reports errors through throw_input_error (common/error.hpp),
# which the module defines to trap. -D_LIBCPP_DISABLE_EXTERN_TEMPLATE: std::string's members
# are instantiated here instead of taken from libc++.a's string.cpp, whose error path prints
# to stderr and would make the module import WASI's file functions; together with the
# operator new of replay_wasm.cpp the module imports nothing. -Os: the L2 walk is
# instantiated per (policy, hash, read/write) and dominates the size; -O2 doubles it.
# -ffp-contract=off as in the native build (resident fractions are divisions, but keep the
# two builds' arithmetic alike).
set(TILESIM_WASM_FLAGS
  --target=wasm32-wasi -std=c++20 -Os -DNDEBUG -fno-exceptions -fno-rtti -ffp-contract=off
  -D_LIBCPP_DISABLE_EXTERN_TEMPLATE -nostdlibinc
  -isystem ${TILESIM_WASI_LIBCXX_INCLUDE} -isystem ${TILESIM_WASI_INCLUDE} -isystem ${_wasm_dir}/include
  -I${CMAKE_SOURCE_DIR})

set(_wasm_sources
  ${CMAKE_SOURCE_DIR}/models/cache/l2.cpp
  ${CMAKE_SOURCE_DIR}/models/cache/hash/hash.cpp
  ${CMAKE_SOURCE_DIR}/models/cache/replacement/replacement.cpp
  ${CMAKE_SOURCE_DIR}/sim/tools/explore/replay.cpp
  ${CMAKE_SOURCE_DIR}/sim/tools/explore/wasm/replay_wasm.cpp)
set(_wasm_objects "")
foreach(src IN LISTS _wasm_sources)
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${src})
  string(REPLACE "/" "_" obj "${rel}")
  set(obj ${_wasm_dir}/${obj}.o)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${TILESIM_WASM_CXX} ${TILESIM_WASM_FLAGS} -MD -MF ${obj}.d -c ${src} -o ${obj}
    DEPENDS ${src}
    DEPFILE ${obj}.d
    COMMENT "Compiling ${rel} for the explorer's WebAssembly module"
    VERBATIM)
  list(APPEND _wasm_objects ${obj})
endforeach()

# No crt files and no entry point: a library module whose exports JS calls (replay_wasm.cpp
# has no global constructors, so nothing has to run first). --strip-all drops the names
# section; --gc-sections what no export reaches.
set(TILESIM_EXPLORE_WASM ${_wasm_dir}/explore_replay.wasm)
add_custom_command(
  OUTPUT ${TILESIM_EXPLORE_WASM}
  COMMAND ${TILESIM_WASM_CXX} --target=wasm32-wasi -nostartfiles -L${TILESIM_WASI_LIB}
          -Wl,--no-entry -Wl,--strip-all -Wl,--gc-sections -o ${TILESIM_EXPLORE_WASM} ${_wasm_objects}
  DEPENDS ${_wasm_objects}
  COMMENT "Linking the explorer's WebAssembly module"
  VERBATIM)

set(TILESIM_EXPLORE_WASM_CPP ${CMAKE_BINARY_DIR}/generated/explore_wasm.cpp)
add_custom_command(
  OUTPUT ${TILESIM_EXPLORE_WASM_CPP}
  COMMAND ${CMAKE_COMMAND} -DWASM=${TILESIM_EXPLORE_WASM} -DOUT=${TILESIM_EXPLORE_WASM_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_wasm.cmake
  DEPENDS ${TILESIM_EXPLORE_WASM} ${CMAKE_SOURCE_DIR}/cmake/embed_wasm.cmake
  COMMENT "Embedding the explorer's WebAssembly module"
  VERBATIM)
