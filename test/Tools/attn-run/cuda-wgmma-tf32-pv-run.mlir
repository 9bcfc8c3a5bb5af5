// REQUIRES: cuda-gpu
// The opt-in tf32 P V on wgmma (--wgmma-tf32-pv) checked against the
// float64 reference on an sm_90a device: bottom-right causal with Tq != Tk
// and partial blocks at head dim 128, an additive mask tensor of random
// terms at head dim 64 (all rows checked). Fully masked rows, GQA and 200
// random shapes: bench/gpu_check.py over a matrix compiled with the option
// (docs/Wgmma.md).

func.func @causal(%q: tensor<?x4x?x128xf32>, %k: tensor<?x4x?x128xf32>, %v: tensor<?x4x?x128xf32>) -> tensor<?x4x?x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32> -> tensor<?x4x?x128xf32>
  return %o : tensor<?x4x?x128xf32>
}
func.func @masked(%q: tensor<?x2x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x2x?x64xf32> {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<1x1x?x?xf32> -> tensor<?x2x?x64xf32>
  return %o : tensor<?x2x?x64xf32>
}

// RUN: attn-run %s -e causal --target=cuda --chip=sm_90a --wgmma-tf32-pv --input=2x4x129x128xf32 \
// RUN:   --input=2x4x1000x128xf32 --input=2x4x1000x128xf32 --check | FileCheck %s
// RUN: attn-run %s -e masked --target=cuda --chip=sm_90a --wgmma-tf32-pv --input=3x2x127x64xf32 \
// RUN:   --input=3x2x127x64xf32 --input=3x2x127x64xf32 --input=1x1x127x127xf32 --check | FileCheck %s
// CHECK: check: PASS rel_l2={{[0-9.e+-]+}} max_abs={{[0-9.e+-]+}}
