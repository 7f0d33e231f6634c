"""Pieces several result families share, owned by none (docs/architecture.md): a family imports these and never
another family. `slots` loads ranked screens (ranking, constituent acceptance), `ranked` ranks a score by its
bootstrap runs, `stability` serves ranking stability to any family that declares it."""
