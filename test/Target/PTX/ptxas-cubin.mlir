// --attn-to-cubin assembles through ptxas; the cubin starts with the ELF magic.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: env CUDA_HOME=%S/no-such-dir attn-translate --attn-to-cubin %s -o %t/k.cubin
// RUN: od -An -c -N4 %t/k.cubin | FileCheck %s --check-prefix=ELF
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/k.json
// ELF: 177   E   L   F
// MANIFEST: "ptx": "k.ptx",
func.func @k(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}
