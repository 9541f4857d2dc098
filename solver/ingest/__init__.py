"""Catalog ingest: files from outside turned into a catalog's CSV tables, and the readers every file
gpuplan reads goes through.

`readers` (text, YAML, a CSV table validated into its model, a pydantic error in words) is what
`solver.load` reads catalogs and problems with; the importers share it, so an imported catalog fails
as a hand-written one would. The importers, used only by `solver.commands`: `skypilot` (SkyPilot's
vms.csv price lists, with its parts `skypilot_rows`, `skypilot_offers`, `skypilot_gpus`,
`skypilot_regions`), `quotes` (a filled quote sheet imported) and `quote_template` (the sheet to fill
in), with `quote_sheet` (the layout both share) and `tables` (the catalog tables' writer).
"""
