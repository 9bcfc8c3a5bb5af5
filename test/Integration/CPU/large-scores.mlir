// Large but finite scores. f32 kernels round scale * log2(e) * S before
// subtracting the row's reference, so the row max gives exp2(0) = 1
// exactly: rows are one-hot (or nearly) at any size, never NaN (an fma of
// the two left the product's rounding error, past exp2's range once the
// scores passed about 2^32: rows of inf / inf = NaN, or zeros). 16-bit
// kernels keep the fma and are exact while |scale * log2(e) * S| < 2^24
// (alpha is taken from the rounded references, so the rows whose max grows
// across key blocks are too); scale 1e5 on scores up to about 20 is 2^21.
// RUN: attn-run %s -e huge --input=2x2x37x16xf32 --input=2x2x53x16xf32 --input=2x2x53x16xf32 --check | FileCheck %s
// RUN: attn-run %s -e huge_causal --input=1x2x129x64xf32 --input=1x2x129x64xf32 --input=1x2x129x64xf32 --check --block-n=16 | FileCheck %s
// RUN: attn-run %s -e large --input=2x2x37x64xf16 --input=2x2x153x64xf16 --input=2x2x153x64xf16 --check --block-n=16 | FileCheck %s
// RUN: attn-run %s -e large_bf16 --input=2x2x37x64xbf16 --input=2x2x153x64xbf16 --input=2x2x153x64xbf16 --check --block-n=16 | FileCheck %s
// CHECK: check: PASS

func.func @huge(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %o = attn.attention %q, %k, %v {scale = 1.0e+20 : f32} : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

func.func @huge_causal(%q: tensor<?x2x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x2x?x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, scale = 1.0e+10 : f32} : tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x2x?x64xf32>
  return %o : tensor<?x2x?x64xf32>
}

func.func @large(%q: tensor<?x2x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x2x?x64xf16> {
  %o = attn.attention %q, %k, %v {scale = 1.0e+05 : f32} : tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x2x?x64xf16>
  return %o : tensor<?x2x?x64xf16>
}

func.func @large_bf16(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x2x?x64xbf16> {
  %o = attn.attention %q, %k, %v {scale = 1.0e+05 : f32} : tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x2x?x64xbf16>
  return %o : tensor<?x2x?x64xbf16>
}
