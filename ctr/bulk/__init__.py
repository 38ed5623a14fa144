"""The CSV import of CTRs, in three layers whose imports run one way:
csv_import -> importer -> sql, and csv_import, importer -> csv_format.

- csv_format: the columns, how a row parses into values or problems, a row's result; it
  imports neither of the others;
- importer: the set-based import, chunk by chunk in PostgreSQL; sql: its statements;
- csv_import: the file read by config.csv_reader with the CTR file's columns, the per-row path
  through ctr.services, and the choice between the two paths.
"""
