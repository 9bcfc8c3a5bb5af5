// --convert-attn-to-nvvm's options are declared once (Conversion/Passes.td)
// and reach the conversion alike from the pass, the pipelines and the
// tools, which read them with the pass's own parser: a tf32 kernel of one
// warpgroup, whose copies are tensor copies by default.
// RUN: rm -rf %t && mkdir -p %t
// The pipelines take them by name, beside their own options:
// RUN: attn-opt %s --attn-to-gpu-kernels="chip=sm_90a tensor-copies=none" | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s --attn-to-gpu-kernels="warp-specialize chip=sm_90a" | FileCheck %s --check-prefix=WS
// RUN: not attn-opt %s --attn-to-gpu-kernels="chip=sm_90a tensor-copies=some" 2>&1 | FileCheck %s --check-prefix=PIPE-BAD
// RUN: not attn-opt %s --attn-to-nvvm="chip=sm_90a no-such-option=1" 2>&1 | FileCheck %s --check-prefix=PIPE-UNKNOWN
// NONE-LABEL: gpu.func @f_kernel
// NONE-NOT:     attn.kernel_tensor_maps
// NONE:         nvvm.cp.async.shared.global
// NONE-NOT:     nvvm.cp.async.bulk.tensor
// WS-LABEL:   gpu.func @f_kernel
// WS-SAME:      known_block_size = array<i32: 256, 1, 1>
// PIPE-BAD: tensor-copies must be auto or none, got 'some'
// PIPE-UNKNOWN: no such option no-such-option

// attn-translate and attn-run take them as --NAME[=VALUE]; one neither
// knows is an error, and --help names them with their defaults.
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --warp-specialize -o %t/ws.ptx
// RUN: FileCheck %s --check-prefix=WS-MANIFEST < %t/ws.json
// WS-MANIFEST: "block": [256, 1, 1],
// RUN: attn-run %s --target=cuda --tensor-copies=none --emit-kernel=%t/none > /dev/null
// RUN: FileCheck %s --check-prefix=NONE-MANIFEST < %t/none/f.json
// NONE-MANIFEST: "version": 1,
// NONE-MANIFEST: "block": [128, 1, 1],
// RUN: not attn-translate --attn-to-ptx %s --no-such-option -o %t/x.ptx 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: attn-translate: error: unknown option or value '--no-such-option': no such option no-such-option
// RUN: not attn-run %s --target=cuda --warp-specialize=maybe --emit-kernel=%t/x 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: attn-run: error: unknown option or value '--warp-specialize=maybe'
// RUN: attn-translate --help | FileCheck %s --check-prefix=HELP
// RUN: attn-run --help | FileCheck %s --check-prefix=HELP
// HELP: the options of --convert-attn-to-nvvm as --NAME=VALUE {{.*}}defaults: convert-attn-to-nvvm{tensor-copies=auto warp-specialize=false}

func.func @f(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x100x64xf32>, %v: tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32> -> tensor<1x2x100x64xf32>
  return %o : tensor<1x2x100x64xf32>
}
