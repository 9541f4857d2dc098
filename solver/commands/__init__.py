"""The commands, one module each, every one with `register(app)`; solver/cli.py lists them.

Why a package: each command is parsed in its own short module and its output drawn by
solver.report, so cli.py stays a table of contents. A command reaches the MILP only
through solver.api, and declares the options it shares with others through
solver.commands.options.
"""
