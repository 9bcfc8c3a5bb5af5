//===- main.cpp - embed the attn dialect from outside the project --------===//
//
// Parses a module holding attn.attention with only the installed attn-mlir
// package, verifies it, and prints what the verifier says.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/InitAll.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: attn-embed FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect>();
  mlir::attn::registerAttnDialect(registry);
  mlir::attn::registerAllPasses();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module) {
    llvm::outs() << "embed: parse or verify failed\n";
    return 1;
  }
  int count = 0;
  module->walk([&](mlir::attn::AttentionOp op) {
    ++count;
    llvm::outs() << "embed: " << op->getName()
                 << " scale=" << op.getScaleValue()
                 << " result=" << op.getOutput().getType() << "\n";
  });
  llvm::outs() << "embed: verified " << count << " op(s)\n";
  return 0;
}
