// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-predict-schedule
// RUN: not zero-opt %s --split-input-file --zero-predict-schedule=compute-rate=0 2>&1 | FileCheck %s --check-prefix=RATE
// RUN: not zero-opt %s --split-input-file --zero-predict-schedule=link-latency=-1 2>&1 | FileCheck %s --check-prefix=LATENCY
// RUN: not zero-opt %s --split-input-file --zero-predict-schedule=calibration=%t.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: printf '{"gemm_flops": 1e11, "memory_bandwidth": 1.2e10, "link_bandwidth": -5}' > %t.bad.json
// RUN: not zero-opt %s --split-input-file --zero-predict-schedule=calibration=%t.bad.json 2>&1 | FileCheck %s --check-prefix=FIELD
// RUN: printf '{"gemm_flops": 1e11, "memory_bandwidth": 1.2e10, "link_bandwidth": 5e9}' > %t.short.json
// RUN: not zero-opt %s --split-input-file --zero-predict-schedule=calibration=%t.short.json 2>&1 | FileCheck %s --check-prefix=SHORT
// RUN: printf '{"gemm_flops": 1e11, "memory_bandwidth": 1.2e10, "link_bandwidth": 5e9, "link_latency": 2e-5, "comm_overlap": 1.5}' > %t.overlap.json
// RUN: not zero-opt %s --split-input-file --zero-predict-schedule=calibration=%t.overlap.json 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: printf '{"gemm_flops": 1e11, "memory_bandwidth": 1.2e10, "link_bandwidth": 5e9, "link_latency": 2e-5, "kernel_overhead_seconds": -1}' > %t.overhead.json
// RUN: not zero-opt %s --split-input-file --zero-predict-schedule=calibration=%t.overhead.json 2>&1 | FileCheck %s --check-prefix=OVERHEAD
// RUN: printf '[1, 2' > %t.notjson
// RUN: not zero-opt %s --split-input-file --zero-predict-schedule=calibration=%t.notjson 2>&1 | FileCheck %s --check-prefix=NOTJSON
// RATE: zero-predict-schedule: compute-rate must be a positive number, got 0
// LATENCY: zero-predict-schedule: link-latency must be zero or more microseconds, got -1
// MISSING: zero-predict-schedule: --calibration={{.*}}.missing: cannot read it
// FIELD: zero-predict-schedule: --calibration={{.*}}.bad.json: "link_bandwidth" must be a positive number, got -5
// SHORT: zero-predict-schedule: --calibration={{.*}}.short.json: no number "link_latency"
// OVERLAP: zero-predict-schedule: --calibration={{.*}}.overlap.json: "comm_overlap" must be a number from -1 to 1
// OVERHEAD: zero-predict-schedule: --calibration={{.*}}.overhead.json: "kernel_overhead_seconds" must be zero or more seconds
// NOTJSON: zero-predict-schedule: --calibration={{.*}}.notjson: not JSON

// expected-error @+1 {{zero-predict-schedule: expected the zrt program (run zero-lower-to-zrt first)}}
module {
  func.func @train_step() {
    return
  }
}
