"""vla-eval (allenai/vla-evaluation-harness) glue for the comparison benches: a benchmark over sim-bridge envs, a model
server over the known-answer policies, and the timed arm."""
