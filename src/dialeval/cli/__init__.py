"""The ``dialeval`` command line: one module per command group, each thin (parse, call the library, print)."""
