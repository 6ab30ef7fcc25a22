"""hybridrag: hybrid retrieval-augmented QA over knowledge graphs and text.

The repository's top-level folders (``agents``, ``app``, ``evals``, ``graphs``, ``kb``, ``prompts``,
``tools``) are the subpackages of this one namespace, so an install never adds generic
top-level names to a user's environment: ``from hybridrag.graphs import get_graph``.
"""

import os

# Before torch or llama.cpp load OpenMP, which reads this once: idle OpenMP threads then sleep
# instead of busy-spinning (10-40x slower calls under load).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
