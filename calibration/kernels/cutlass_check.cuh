// CUTLASS_OK(status): a CUTLASS call that did not succeed stops the program with its status and
// place, exit 2 (the CUTLASS 2 and 3 calibration programs).
#pragma once
#include <cstdio>
#include <cstdlib>

#include <cutlass/cutlass.h>

#define CUTLASS_OK(x)                                                                          \
  do {                                                                                         \
    cutlass::Status st_ = (x);                                                                 \
    if (st_ != cutlass::Status::kSuccess) {                                                    \
      fprintf(stderr, "CUTLASS error '%s' at %s:%d\n", cutlassGetStatusString(st_), __FILE__,  \
              __LINE__);                                                                       \
      exit(2);                                                                                 \
    }                                                                                          \
  } while (0)
