"""Side tools that are features of their own, beside the planner: `calibrate` (the MFU a short
measured run achieved) and `billing` (a shared rack's bill per tenant, `split-bill`). They use
`model`, `estimate`, `load` and `files`, and are used only by `solver.commands` and `solver.report`.
"""
