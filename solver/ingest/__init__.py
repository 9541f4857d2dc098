"""Catalog ingest: price lists and quote sheets turned into a catalog's CSV tables.

`skypilot` (SkyPilot's vms.csv price lists, with its parts `skypilot_rows`, `skypilot_offers`,
`skypilot_gpus`, `skypilot_regions`) and `quotes` (the quote-sheet template and its import) write a
catalog folder that `solver.load` then reads; they are used only by `solver.commands`.
"""
