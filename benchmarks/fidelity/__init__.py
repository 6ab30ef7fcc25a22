"""The realistic stand-in: SmolLM2's measured first-decision errors, and the fidelity rows under them."""
