"""Scripts/bench: Huddle's benchmarks, one module per figure (latency, holdback, ingest, serf,
discovery, marks, loss: the names `--only` takes), what they share in harness, and the command
line in __main__. BENCHMARKS.md says how each figure is measured and what it shows."""
