"""Fusion (training-free KG + dense-text fusion): graph expansion (:mod:`.paths`) and Dice scoring (:mod:`.scoring`)."""
