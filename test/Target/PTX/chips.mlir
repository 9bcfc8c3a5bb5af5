// The PTX ISA follows the chip: PTX 8.0 up to sm_9x; from sm_100 on the
// chip's minimum, which LLVM picks (with +ptx80 it would abort). An explicit
// --features wins.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s --chip=sm_80 -o %t/a.ptx
// RUN: FileCheck %s --check-prefix=SM80 < %t/a.ptx
// RUN: attn-translate --attn-to-ptx %s --chip=sm_100a -o %t/b.ptx
// RUN: FileCheck %s --check-prefix=SM100 < %t/b.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/b.json
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --features=+ptx87 -o %t/c.ptx
// RUN: FileCheck %s --check-prefix=FEATURES < %t/c.ptx
// The named pipeline picks the same: its PTX is in the gpu.binary.
// RUN: attn-opt %s --attn-to-nvvm="chip=sm_100a" | FileCheck %s --check-prefix=PIPE
// PIPE: gpu.binary @attn_kernels
// PIPE-SAME: .version 8.6
// PIPE-SAME: .target sm_100a
// SM80: .version 8.0
// SM80: .target sm_80
// SM80: mma.sync.aligned.m16n8k16
// SM100: .version 8.6
// SM100: .target sm_100a
// SM100: mma.sync.aligned.m16n8k16
// SM100-NOT: wgmma
// MANIFEST: "chip": "sm_100a",
// FEATURES: .version 8.7
// FEATURES: .target sm_90a
func.func @k(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}
