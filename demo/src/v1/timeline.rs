//! The V1 run's seven dispatcher generations in order: each runs its cells until it hangs, is killed or falls
//! back, and the skip-row batches land between them.

use super::{Replay, edt, find};
use crate::DemoError;
use crate::v1::manifest::Generation;

/// The plan indices where the timeline turns.
#[derive(Clone, Copy)]
struct Turns {
    /// scaling × long_decode × N=16 rep 0 (cell 283): the first deterministic hang.
    hang_long: usize,
    /// scaling × repeated_prefix × N=16 rep 0: the second hang.
    hang_repeated: usize,
    /// ttft × balanced_2k × N=16 rep 0: the partial cell of V5's fallback.
    partial: usize,
}

impl Replay<'_> {
    /// Replays generations V1 to V7 and returns when the run completed.
    pub(super) fn replay_generations(&mut self, launch: f64) -> Result<f64, DemoError> {
        let turns = Turns {
            hang_long: find(&self.plan, "scaling", "long_decode", 16, 0),
            hang_repeated: find(&self.plan, "scaling", "repeated_prefix", 16, 0),
            partial: find(&self.plan, "ttft", "balanced_2k", 16, 0),
        };
        let (v1, killed) = self.first_hang(launch, turns)?;
        let (v2, batch_1) = self.reproduced_hang(killed, turns);
        let (v3, batch_2) = self.second_hang(batch_1, turns)?;

        // V4: diagnostic only (capture_environment() hung in platform.machine() on degraded WMI).
        let mut v4 = Generation::new("V4", None, (batch_2 + 600.0).max(edt(6, 4, 11, 30, 0.0)));
        let v4_end = v4.launched + 1500.0;
        v4.finish(v4_end, "capture_environment() hang in platform.machine() (WMI); no cells; patched in commit 2d339c4d");

        let (v5, batch_3) = self.partial_fallback(v4_end, turns)?;
        let (v6, v7, complete) = self.completion(batch_3, turns)?;
        self.generations = vec![v1, v2, v3, v4, v5, v6, v7];
        Ok(complete)
    }

    /// V1 (PID 22488): cells 1–282, then the first hang on cell 283; returns V1 and when it was killed.
    fn first_hang(&mut self, launch: f64, turns: Turns) -> Result<(Generation, f64), DemoError> {
        let hang_long = turns.hang_long;
        let mut v1 = Generation::new("V1", Some(22488), launch);
        self.clock = launch + 75.0; // capture_environment + first model load
        self.run_cells(0..hang_long, &v1)?;
        let hang_start = (self.clock + 20.0).max(edt(6, 3, 4, 3, 0.0));
        let killed = hang_start + (edt(6, 3, 14, 0, 0.0) - edt(6, 3, 4, 3, 0.0));
        self.event(
            hang_long,
            hang_start,
            "started",
            &v1,
            "nsys-wrapped cell_worker subprocess (capture rule peak_load_only)".into(),
        );
        self.event(
            hang_long,
            hang_start + 3.0 * 3600.0,
            "hang_detected",
            &v1,
            "no metric rows; GPU 99% SM, 43-49 W, 50-55 C; one core spinning (GIL)".into(),
        );
        self.event(
            hang_long,
            killed,
            "killed",
            &v1,
            "user-authorized kill after ~9 h 57 m; partial .qdstrm ~1.24 GB".into(),
        );
        v1.finish(
            killed,
            "killed during deterministic hang on scaling x long_decode x N=16 rep 0 (cell 283)",
        );
        Ok((v1, killed))
    }

    /// V2 (PID 49720): `--resume` picks up the same cell and reproduces the hang; skip batch 1 lands between the V2
    /// kill and the V3 launch (the V2 retry shows it was not there before). Returns V2 and batch 1's time.
    fn reproduced_hang(&mut self, v1_killed: f64, turns: Turns) -> (Generation, f64) {
        let hang_long = turns.hang_long;
        let mut v2 = Generation::new(
            "V2",
            Some(49720),
            (v1_killed + 600.0).max(edt(6, 3, 15, 26, 0.0)),
        );
        let attempt = v2.launched + 240.0;
        self.event(
            hang_long,
            attempt,
            "started",
            &v2,
            "--resume picked up cell 283 again (nsys-wrapped)".into(),
        );
        self.event(
            hang_long,
            attempt + 1680.0,
            "hang_detected",
            &v2,
            "same thermal/power signature within ~30 min: deterministic".into(),
        );
        let killed = v2.launched + (edt(6, 3, 19, 2, 0.0) - edt(6, 3, 15, 26, 0.0));
        self.event(
            hang_long,
            killed,
            "killed",
            &v2,
            "killed; partial trace pytorch_direct_llama3.2-3b_long_decode_n16_rep0.nsys-rep (1.24 GB)"
                .into(),
        );
        v2.finish(killed, "killed during the reproduced hang on cell 283");
        let batch_1 = killed + 720.0;
        for index in hang_long..hang_long + 3 {
            self.skip_row(index, batch_1, 1, &v2);
        }
        (v2, batch_1)
    }

    /// V3 (PID 21480): resumes after the skip rows, hangs on scaling × repeated_prefix × N=16 rep 0; skip batch 2
    /// marks that shape and, preemptively, the ttft cells of the same hang class. Returns V3 and batch 2's time.
    fn second_hang(&mut self, batch_1: f64, turns: Turns) -> Result<(Generation, f64), DemoError> {
        let Turns {
            hang_long,
            hang_repeated,
            ..
        } = turns;
        let mut v3 = Generation::new(
            "V3",
            Some(21480),
            (batch_1 + 300.0).max(edt(6, 3, 19, 30, 0.0)),
        );
        self.clock = v3.launched + 75.0;
        self.last_model = "";
        self.run_cells(hang_long + 3..hang_repeated, &v3)?;
        let hang_start = self.clock + 20.0;
        let killed = (hang_start + 3.3 * 3600.0).max(edt(6, 4, 10, 45, 0.0));
        self.event(
            hang_repeated,
            hang_start,
            "started",
            &v3,
            "nsys-wrapped cell_worker subprocess (capture rule peak_load_only)".into(),
        );
        self.event(
            hang_repeated,
            hang_start + 2.5 * 3600.0,
            "hang_detected",
            &v3,
            "no metric rows; hang signature as V1/V2".into(),
        );
        self.event(
            hang_repeated,
            killed,
            "killed",
            &v3,
            "killed; second pathological shape".into(),
        );
        v3.finish(
            killed,
            "killed during deterministic hang on scaling x repeated_prefix x N=16 rep 0",
        );
        let batch_2 = killed + 300.0;
        let preemptive: Vec<usize> = (0..3)
            .map(|rep| find(&self.plan, "ttft", "long_decode", 16, rep))
            .chain((0..3).map(|rep| find(&self.plan, "ttft", "repeated_prefix", 16, rep)))
            .collect();
        for index in (hang_repeated..hang_repeated + 3).chain(preemptive.iter().copied()) {
            self.skip_row(index, batch_2, 2, &v3);
        }
        for index in preemptive {
            if let Some(event) = self.histories[index].last_mut() {
                event
                    .detail
                    .push_str(" (preemptive: N=16 hang class on llama3.2-3b)");
            }
        }
        Ok((v3, batch_2))
    }

    /// V5 (PID 48056): the ttft phase on llama3.2-3b up to the partial cell, then killed in its fallback; skip
    /// batch 3 marks the partial cell's other reps. Returns V5 and batch 3's time.
    fn partial_fallback(
        &mut self,
        v4_end: f64,
        turns: Turns,
    ) -> Result<(Generation, f64), DemoError> {
        let partial = turns.partial;
        let mut v5 = Generation::new(
            "V5",
            Some(48056),
            (v4_end + 1800.0).max(edt(6, 4, 17, 7, 0.0)),
        );
        self.clock = v5.launched + 75.0;
        self.last_model = "";
        let ttft_start = find(&self.plan, "ttft", "short_decode", 1, 0);
        self.run_cells(ttft_start..partial, &v5)?;
        let attempt = self.clock + 15.0;
        self.event(
            partial,
            attempt,
            "started",
            &v5,
            "nsys-wrapped cell_worker subprocess (capture rule peak_load_only)".into(),
        );
        self.event(
            partial,
            attempt + 1800.0,
            "subprocess_timeout",
            &v5,
            "30-min nsys attempt timed out; ERROR logged".into(),
        );
        let fallback_start = attempt + 1815.0;
        self.event(
            partial,
            fallback_start,
            "fallback_started",
            &v5,
            "re-running in-process (agent_executor)".into(),
        );
        self.clock = fallback_start;
        let last_row = self.partial_cell(&self.plan[partial].clone(), fallback_start)?;
        let killed =
            (last_row + 1200.0).max(v5.launched + (edt(6, 4, 20, 53, 0.0) - edt(6, 4, 17, 7, 0.0)));
        self.event(
            partial,
            last_row + 600.0,
            "hang_detected",
            &v5,
            "fallback stalled with in-flight rows written; 50 C / 23.78 W".into(),
        );
        self.event(
            partial,
            killed,
            "killed",
            &v5,
            format!(
                "killed; {} in-flight rows already in metrics.csv",
                self.rows_written[partial]
            ),
        );
        v5.finish(
            killed,
            "killed during the fallback of ttft x balanced_2k x N=16 rep 0",
        );
        let batch_3 = killed + 240.0;
        self.mark_partial(partial, batch_3, &v5);
        Ok((v5, batch_3))
    }

    /// Skip batch 3: skip rows for the partial cell's reps 1 and 2, and rep 0's deduplicated skip row.
    fn mark_partial(&mut self, partial: usize, batch_3: f64, v5: &Generation) {
        for index in [partial + 1, partial + 2] {
            self.skip_row(index, batch_3, 3, v5);
        }
        self.event(partial, batch_3, "skip_row_deduplicated", v5, "skip row for rep 0 not kept: the key is already completed by its in-flight ok rows (_load_completed_keys dedups by cell key)".into());
        self.event(
            partial,
            batch_3,
            "completed",
            v5,
            format!(
                "partial: rows_written={} of 192 (deterministic-hang-with-partial-progress)",
                self.rows_written[partial]
            ),
        );
    }

    /// V6: killed at launch by the harness auto-updater; V7 (PID 17332) completes the remaining 24 real cells.
    /// Returns both and when the run completed.
    fn completion(
        &mut self,
        batch_3: f64,
        turns: Turns,
    ) -> Result<(Generation, Generation, f64), DemoError> {
        let mut v6 = Generation::new("V6", None, batch_3 + 60.0);
        v6.finish(batch_3 + 105.0, "launch killed by Claude Code v2.1.162 auto-updater non-atomic binary swap (anthropics/claude-code#65478); not a hang");
        let mut v7 = Generation::new(
            "V7",
            Some(17332),
            (batch_3 + 180.0).max(edt(6, 4, 21, 0, 0.0)),
        );
        self.clock = v7.launched + 75.0;
        self.last_model = "";
        self.run_cells(turns.partial + 3..self.plan.len(), &v7)?;
        let complete = self.clock + 4.0;
        v7.finish(complete, "TR164 run complete.");
        Ok((v6, v7, complete))
    }
}
