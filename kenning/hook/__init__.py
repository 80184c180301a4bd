"""The hook process: stdin → gates → spool or context. Standard library only, always exits 0."""
