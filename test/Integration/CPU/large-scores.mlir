// Large but finite scores: each row's softmax is one-hot (or nearly), never
// NaN. The exponent rounds scale * log2(e) * S before subtracting the row's
// reference, so the row max gives exp2(0) = 1 exactly; an fma of the two
// left the rounding error of the product, past exp2's range once the
// scores pass about 2^32 (rows of inf / inf = NaN, or zeros).
// RUN: attn-run %s -e huge --input=2x2x37x16xf32 --input=2x2x53x16xf32 --input=2x2x53x16xf32 --check | FileCheck %s
// RUN: attn-run %s -e huge_causal --input=1x2x129x64xbf16 --input=1x2x129x64xbf16 --input=1x2x129x64xbf16 --check | FileCheck %s
// RUN: attn-run %s -e large --input=2x2x37x16xf16 --input=2x2x53x16xf16 --input=2x2x53x16xf16 --check | FileCheck %s
// CHECK: check: PASS

func.func @huge(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %o = attn.attention %q, %k, %v {scale = 1.0e+20 : f32} : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

func.func @huge_causal(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x2x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, scale = 1.0e+10 : f32} : tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x2x?x64xbf16>
  return %o : tensor<?x2x?x64xbf16>
}

func.func @large(%q: tensor<?x2x?x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x16xf16>) -> tensor<?x2x?x16xf16> {
  %o = attn.attention %q, %k, %v {scale = 3.0e+08 : f32} : tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16> -> tensor<?x2x?x16xf16>
  return %o : tensor<?x2x?x16xf16>
}
