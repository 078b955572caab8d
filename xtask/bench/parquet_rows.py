"""What request rows would cost as Parquet: size per row and the time to read one cell's rows back.

Usage: python parquet_rows.py METRICS.csv [OUT_DIR]

Reads one metrics.csv with pyarrow, writes it as Parquet twice (as written: rows in file order; and sorted by the
cell key, which is how a per-run file written next to the cache would be laid out), each with zstd and row groups
of 16,384 rows, and prints the bytes per row of each beside the CSV's. Then reads the rows of 20 cells spread over
the file back with a predicate on the cell key (the way DataFusion or pyarrow's dataset scanner would answer
`/api/requests`), 7 times each, and prints the median milliseconds per cell and how many row groups the
predicate could skip. Inputs for docs/scale.md; nothing here is a budget.
"""
import os
import statistics
import sys
import time

import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

KEY = ["suite", "phase", "backend", "model", "workload", "n_agents", "rep"]


def main():
    source = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "target/bench/parquet"
    os.makedirs(out_dir, exist_ok=True)
    table = pcsv.read_csv(source)
    rows = table.num_rows
    csv_bytes = os.path.getsize(source)
    print(f"{source}: {rows} rows, {csv_bytes} bytes of CSV ({csv_bytes / rows:.1f} B/row)")
    layouts = {
        "file order": table,
        "sorted by cell": table.sort_by([(column, "ascending") for column in KEY]),
    }
    cells = table.select(KEY).group_by(KEY).aggregate([]).to_pylist()
    chosen = [cells[i * len(cells) // 20] for i in range(20)]
    for name, laid_out in layouts.items():
        path = os.path.join(out_dir, f"rows-{name.replace(' ', '-')}.parquet")
        pq.write_table(laid_out, path, compression="zstd", row_group_size=16384)
        parquet_bytes = os.path.getsize(path)
        groups = pq.ParquetFile(path).metadata.num_row_groups
        dataset = ds.dataset(path)
        medians = []
        touched = []
        for cell in chosen:
            predicate = None
            for column in KEY:
                term = pc.field(column) == cell[column]
                predicate = term if predicate is None else predicate & term
            fragment = next(dataset.get_fragments())
            touched.append(len(list(fragment.split_by_row_group(predicate))))
            times = []
            for _ in range(7):
                started = time.perf_counter()
                dataset.to_table(filter=predicate)
                times.append(time.perf_counter() - started)
            medians.append(statistics.median(times) * 1e3)
        print(
            f"  {name}: {parquet_bytes} bytes ({parquet_bytes / rows:.1f} B/row, {csv_bytes / parquet_bytes:.1f}x "
            f"smaller than the CSV), {groups} row groups; one cell's rows read back in a median of "
            f"{statistics.median(medians):.1f} ms (range {min(medians):.1f}-{max(medians):.1f} ms over 20 cells), "
            f"touching {statistics.median(touched):.0f} of {groups} row groups"
        )


if __name__ == "__main__":
    main()
