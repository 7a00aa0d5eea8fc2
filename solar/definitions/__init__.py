"""SOL-ExecBench / FlashInfer-Bench definitions: the definition + workload format (schema), the
problems made from them (suite), SOL scores from measured times (scores) and the command (cli)."""
