// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-report
// RUN: not zero-opt %s --zero-report=format=xml 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: zero-report: format must be table or json, got 'xml'

// expected-error @+1 {{zero-report: expected the zrt program (run zero-lower-to-zrt first)}}
module {
  func.func @train_step() {
    return
  }
}
