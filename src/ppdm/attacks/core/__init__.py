"""The audit's core types: the threat model, an attack's result, what was read (scope), privacy targets, the truth-is-feasible check."""
