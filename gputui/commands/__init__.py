"""One module per CLI command; each exposes ``main(args) -> int`` and is imported only when it runs."""
