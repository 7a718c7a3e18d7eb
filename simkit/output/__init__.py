"""The output layer: numbers as text, tables, plots, report pages and files.  It
renders results and never simulates."""
