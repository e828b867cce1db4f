//===- Codegen.cpp - LLVM IR, object files and executables ----------------===//
#include "lib/Codegen/Codegen.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace zero {

void registerCodegenTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

static std::unique_ptr<llvm::Module> translate(ModuleOp module,
                                               llvm::LLVMContext &llvmCtx) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmCtx, "zero-program");
  if (!llvmModule)
    module.emitError("could not translate the module to LLVM IR (is it "
                     "lowered to the LLVM dialect?)");
  return llvmModule;
}

LogicalResult emitLLVMIR(ModuleOp module, llvm::raw_ostream &os) {
  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule = translate(module, llvmCtx);
  if (!llvmModule)
    return failure();
  llvmModule->print(os, nullptr);
  return success();
}

LogicalResult emitObjectFile(ModuleOp module, StringRef path) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule = translate(module, llvmCtx);
  if (!llvmModule)
    return failure();

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError() << "no LLVM target for " << triple.str() << ": "
                              << error;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", {}, llvm::Reloc::PIC_));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return module.emitError() << "cannot write " << path << ": "
                              << ec.message();
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("the target cannot emit object files");
  pm.run(*llvmModule);
  out.keep();
  return success();
}

LogicalResult linkExecutable(Location loc, StringRef objectPath,
                             StringRef outputPath, StringRef runtimeDir) {
  std::string dir = runtimeDir.str();
  if (dir.empty())
    if (const char *env = std::getenv("ZERO_RUNTIME_DIR"))
      dir = env;
  if (dir.empty())
    dir = ZERO_DEFAULT_RUNTIME_DIR;
  SmallString<256> mainLib(dir), sharedLib(dir);
  llvm::sys::path::append(mainLib, "libzrt_main.a");
  llvm::sys::path::append(sharedLib, "libzrt.so");
  for (StringRef lib : {mainLib.str(), sharedLib.str()})
    if (!llvm::sys::fs::exists(lib))
      return emitError(loc) << "the runtime library " << lib
                            << " does not exist (build libzrt, or point "
                               "--runtime-dir / ZERO_RUNTIME_DIR at it)";

  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return emitError(loc) << "no C compiler driver 'cc' on PATH to link with";
  std::string rpath = "-Wl,-rpath," + dir;
  std::string libDir = "-L" + dir;
  SmallVector<StringRef> args{*cc,      objectPath, mainLib.str(), libDir,
                              "-lzrt",  rpath,      "-o",          outputPath};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0,
                                         &message);
  if (status != 0)
    return emitError(loc) << "linking " << outputPath << " failed"
                          << (message.empty() ? "" : ": ") << message
                          << " (exit status " << status << ")";
  return success();
}

} // namespace zero
