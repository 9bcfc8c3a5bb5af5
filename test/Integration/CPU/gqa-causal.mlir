// Grouped-query attention (8 query heads on 2 KV heads), causal with both
// alignments, Tq != Tk, executed on the host and checked against float64.
// RUN: attn-run %s -e top_left --input=2x8x129x64xbf16 --input=2x2x65x64xbf16 --input=2x2x65x64xbf16 --check | FileCheck %s --check-prefix=TL
// RUN: attn-run %s -e bottom_right --input=2x8x129x64xf16 --input=2x2x65x64xf16 --input=2x2x65x64xf16 --check | FileCheck %s --check-prefix=BR
// RUN: attn-run %s -e bottom_right --input=1x8x1x64xf16 --input=1x2x1000x64xf16 --input=1x2x1000x64xf16 --check --block-m=16 --block-n=8 | FileCheck %s --check-prefix=BR

// TL: attn-run: top_left on cpu: q=2x8x129x64xbf16 k=2x2x65x64xbf16 v=2x2x65x64xbf16 -> o=2x8x129x64xbf16
// TL-NEXT: check: PASS
// BR: check: PASS

func.func @top_left(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

// With Tq > Tk, bottom_right leaves the first Tq - Tk rows without any
// visible key: those rows must be 0, not NaN.
func.func @bottom_right(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}
