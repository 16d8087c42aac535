// Host/device qualifiers: every primitive shared by the CPU core and the CUDA
// kernels is written once behind ACESIM_HD.
#pragma once

#if defined(__CUDACC__)
#define ACESIM_HD __host__ __device__ __forceinline__
#else
#define ACESIM_HD inline
#endif
