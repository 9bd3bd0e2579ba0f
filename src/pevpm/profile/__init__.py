"""The machine profile: one SQLite file of MPIBench blocks (schema, reading, writing), stored fits, synthetic profiles."""
