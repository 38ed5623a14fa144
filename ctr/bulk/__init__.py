"""The CSV import of CTRs, in three layers whose imports run one way:
csv_import -> importer -> sql, and each of them -> csv_format.

- csv_format: the columns, how a row parses into values or problems, a row's result;
- importer (with sql, its SQL statements): the set-based import, chunk by chunk in PostgreSQL;
- csv_import: the file read (config.csv_reader), the per-row path through ctr.services, and
  the choice between the two paths.
"""
