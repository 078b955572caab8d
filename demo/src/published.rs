//! Tables published in the TR164 reports that the demo data follows and the tests check it against: typed once
//! here, from the reports (each table named as the report names it), and shared by the demo's and the server's
//! oracle tests.

/// Appendix D: (phase, model, workload, efficiency, p95 multiplier) at N=2.
pub const APPENDIX_D: [(&str, &str, &str, f64, f64); 24] = [
    ("scaling", "llama3.2-1b", "balanced_2k", 0.530, 2.046),
    ("scaling", "llama3.2-1b", "long_decode", 0.543, 1.931),
    ("scaling", "llama3.2-1b", "repeated_prefix", 0.435, 1.800),
    ("scaling", "llama3.2-1b", "short_decode", 0.644, 1.551),
    ("scaling", "llama3.2-3b", "balanced_2k", 0.483, 2.678),
    ("scaling", "llama3.2-3b", "long_decode", 0.494, 1.953),
    ("scaling", "llama3.2-3b", "repeated_prefix", 0.487, 1.981),
    ("scaling", "llama3.2-3b", "short_decode", 0.551, 1.827),
    ("scaling", "qwen2.5-1.5b", "balanced_2k", 0.615, 1.684),
    ("scaling", "qwen2.5-1.5b", "long_decode", 0.643, 1.722),
    ("scaling", "qwen2.5-1.5b", "repeated_prefix", 0.602, 1.716),
    ("scaling", "qwen2.5-1.5b", "short_decode", 0.571, 1.751),
    ("ttft", "llama3.2-1b", "balanced_2k", 0.334, 2.839),
    ("ttft", "llama3.2-1b", "long_decode", 0.547, 1.911),
    ("ttft", "llama3.2-1b", "repeated_prefix", 0.410, 1.651),
    ("ttft", "llama3.2-1b", "short_decode", 0.528, 1.981),
    ("ttft", "llama3.2-3b", "balanced_2k", 0.425, 2.363),
    ("ttft", "llama3.2-3b", "long_decode", 0.531, 2.036),
    ("ttft", "llama3.2-3b", "repeated_prefix", 0.473, 2.816),
    ("ttft", "llama3.2-3b", "short_decode", 0.589, 1.852),
    ("ttft", "qwen2.5-1.5b", "balanced_2k", 0.613, 1.708),
    ("ttft", "qwen2.5-1.5b", "long_decode", 0.600, 1.728),
    ("ttft", "qwen2.5-1.5b", "repeated_prefix", 0.605, 1.745),
    ("ttft", "qwen2.5-1.5b", "short_decode", 0.607, 1.702),
];
