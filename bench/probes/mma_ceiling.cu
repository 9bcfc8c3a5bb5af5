// The tensor-core ceilings of mma.sync on this GPU: how many TFLOP/s the
// instructions our sm_80 path uses (mma.sync m16n8k8 tf32, m16n8k16
// f16/bf16 with f32 accumulators) reach when nothing else runs, and the same
// with each operand fetched from shared memory the way the attention kernel
// fetches it (4-byte loads for tf32, ldmatrix.x4 for 16-bit).
//
// Build and run on the GPU machine:
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a \
//        bench/probes/mma_ceiling.cu -o /tmp/mma_ceiling && /tmp/mma_ceiling
// Prints one line per variant: name, TFLOP/s (median of 5 launches).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, \
                  __LINE__);                                                   \
      return 1;                                                                \
    }                                                                          \
  } while (0)

constexpr int kChains = 8; // independent accumulators per warp
constexpr int kIters = 4096;

__device__ __forceinline__ void mmaTf32(float (&d)[4], const unsigned (&a)[4],
                                        const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
}

__device__ __forceinline__ void mmaTf32K4(float (&d)[4], const unsigned (&a)[4],
                                          const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 "
               "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

template <bool BF16>
__device__ __forceinline__ void mma16(float (&d)[4], const unsigned (&a)[4],
                                      const unsigned (&b)[2]) {
  if (BF16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
}

// kind 0: tf32, 1: f16, 2: bf16, 3: tf32 m16n8k4. fromShared: B (and A every 4th mma) read
// from shared memory per mma, as a Q K^T inner loop does. Wide (tf32 only):
// A stays in registers (cached Q, or P) and one 16-byte load gives the B
// registers of two consecutive k steps (the head dim permuted so that a
// lane's columns of two k steps are contiguous), rows padded to 144 words
// so that the 8 lanes of each quarter warp hit distinct banks.
template <int Kind, bool FromShared, bool Wide = false>
__global__ void mmaLoop(float *out, unsigned seed) {
  __shared__ __align__(16) unsigned smem[64 * 144];
  int lane = threadIdx.x % 32;
  for (int i = threadIdx.x; i < 64 * 144; i += blockDim.x)
    smem[i] = seed * (i + 1);
  __syncthreads();
  unsigned a[4], b[2], b2[2] = {0, 0};
  for (int i = 0; i < 4; ++i)
    a[i] = seed ^ (lane * 7 + i);
  for (int i = 0; i < 2; ++i)
    b[i] = seed ^ (lane * 13 + i);
  float d[kChains][4] = {};
  unsigned warpBase = (threadIdx.x / 32) % 2 * 32 * 132;
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if (Wide) {
        unsigned base = (threadIdx.x / 32) % 2 * 32 * 144;
        if (c % 2 == 0) {
          unsigned off = base + (lane / 4 + 8 * (c / 2 % 4)) * 144 +
                         (lane % 4) * 4 + 16 * (it % 8);
          uint4 v = *reinterpret_cast<const uint4 *>(&smem[off]);
          b[0] = v.x;
          b[1] = v.y;
          b2[0] = v.z;
          b2[1] = v.w;
        } else {
          b[0] = b2[0];
          b[1] = b2[1];
        }
      } else if (FromShared) {
        // Row lane / 4, column lane % 4 of a padded 132-word row (the
        // kernel's layout): conflict-free 4-byte loads.
        unsigned off = warpBase + (lane / 4 + 8 * (c % 4)) * 132 + lane % 4 +
                       8 * (it % 16);
        b[0] = smem[off];
        b[1] = smem[off + 4];
        if (c % 4 == 0) {
          a[0] = smem[off + 1];
          a[1] = smem[off + 8 * 132 + 1];
          a[2] = smem[off + 5];
          a[3] = smem[off + 8 * 132 + 5];
        }
      }
      if (Kind == 0)
        mmaTf32(d[c], a, b);
      else if (Kind == 3)
        mmaTf32K4(d[c], a, b);
      else
        mma16<Kind == 2>(d[c], a, b);
    }
  }
  float s = 0;
  for (int c = 0; c < kChains; ++c)
    s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int Kind, bool FromShared, bool Wide = false>
static int run(const char *name, int blocksPerSm, int warps) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int blocks = prop.multiProcessorCount * blocksPerSm;
  int threads = 32 * warps;
  float *out;
  CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  mmaLoop<Kind, FromShared, Wide><<<blocks, threads>>>(out, 1);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(start));
    mmaLoop<Kind, FromShared, Wide><<<blocks, threads>>>(out, r + 2);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  double flopsPerMma = Kind == 3   ? 2.0 * 16 * 8 * 4
                       : Kind == 0 ? 2.0 * 16 * 8 * 8
                                   : 2.0 * 16 * 8 * 16;
  double flops = flopsPerMma * kChains * kIters * blocks * warps;
  std::printf("%-34s %4d warps/SM  %7.1f TFLOP/s\n", name, blocksPerSm * warps,
              flops / (ms[2] * 1e-3) / 1e12);
  CHECK(cudaFree(out));
  return 0;
}

int main() {
  int rc = 0;
  for (int w : {4, 8, 16}) {
    rc |= run<0, false>("tf32 m16n8k8 registers", w / 4, 4);
    rc |= run<1, false>("f16 m16n8k16 registers", w / 4, 4);
    rc |= run<2, false>("bf16 m16n8k16 registers", w / 4, 4);
    rc |= run<0, true>("tf32 m16n8k8 B from shared", w / 4, 4);
    rc |= run<1, true>("f16 m16n8k16 B from shared", w / 4, 4);
    rc |= run<0, false, true>("tf32 B from shared, 16-byte loads", w / 4, 4);
    rc |= run<3, false>("tf32 m16n8k4 registers", w / 4, 4);
  }
  return rc;
}
