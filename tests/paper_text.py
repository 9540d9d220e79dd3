"""The seed texts of the tables issue 27 adds as data, verbatim (the seed files are not in the package, so
the tests carry the lines they check): Sureon Tables 4, 5, 15-18 as the seed's Markdown rows, SurgHiBench
supplement Tables 8-10 as the seed's run-together text, and the sentences of MedHorizon section 4 that
quote Figs. 7-10."""

SUREON_TABLE_4 = (
    '| Distractors | # training samples | $S_{v}$ | $S_{wv}$ | MG |',
    '| --- | --- | --- | --- | --- |',
    '| Stage 1 (Baseline) | 176.6K | 22.4 | 13.7 | 8.7 |',
    '| Stage 2 (RADG) | 176.6K | 39.5 | 22.7 | 16.8 |',
    '| Stage 3 (Blind-Test Curation) | 76K | 48.2 | 19.1 | 29.1 |',
)

SUREON_TABLE_5 = (
    '| Method | Cholec80 [58] | HeiChole Phase [59] | HeiChole Action [59] |',
    '| --- | --- | --- | --- |',
    '| GPT-5.1 | 36.0 | 29.0 | 18.0 |',
    '| Gemini 3.1 Pro | 47.0 | 35.0 | 21.0 |',
    '| Qwen3-VL-8B | 17.0 | 12.0 | 17.0 |',
    '| SurgAtlas-VLM | 68.2 | 54.5 | 55.8 |',
    '| Sureon-VLM | 55.33 | 47.1 | 14.5 |',
    '| Sureon-VLM (clip) | 78.85 | 71.4 | clip eval not applicable |',
)

SUREON_TABLE_15 = (
    '| Model | Perception (%) | Reasoning (%) |',
    '| --- | --- | --- |',
    '| Human | 72.9 [66.3, 79.5] | 54.9 [46.6, 63.2] |',
    '| Gemini 3.1 Pro | 53.0 [45.2, 60.8] | 51.1 [42.9, 59.4] |',
    '| Sureon-VLM | 48.8 [41.6, 56.0] | 47.4 [39.1, 55.6] |',
    '| GPT-5.1 (high) | 50.0 [42.2, 57.8] | 42.9 [34.6, 51.1] |',
    '| Sureon-VLM (Sureon-only) | 42.8 [35.5, 50.6] | 45.9 [37.6, 54.1] |',
    '| Gemma 4 | 39.8 [32.5, 47.0] | 30.8 [23.3, 39.1] |',
    '| Qwen3VL-32B-T | 42.2 [34.3, 49.4] | 24.1 [17.3, 31.6] |',
    '| Qwen3VL-8B-I | 26.5 [19.9, 33.1] | 18.8 [12.0, 25.6] |',
    '| Sureon-VLM (Public-only) | 27.1 [20.5, 33.7] | 12.8 [7.5, 18.8] |',
    '| MedGRPO | 19.3 [13.2, 25.3] | 13.5 [8.3, 19.6] |',
    '| Molmo2 | 20.5 [14.5, 27.1] | 8.3 [3.8, 13.5] |',
    '| MedGemma 1.5 | 12.0 [7.2, 17.5] | 9.0 [4.5, 14.3] |',
)

SUREON_TABLE_16 = (
    '| Model | AD ($n=35$) | IAI ($n=31$) | EA ($n=34$) | EE ($n=37$) | PAD ($n=29$) |',
    '| --- | --- | --- | --- | --- | --- |',
    '| Human | 74.3 [60.0, 88.6] | 74.2 [58.1, 87.1] | 73.5 [58.8, 88.2] | 51.3 [35.1, 67.6] | 96.5 [89.7, 100.0] |',
    '| Gemini 3.1 Pro | 54.3 [37.1, 71.4] | 54.8 [38.7, 71.0] | 41.2 [23.5, 58.8] | 48.6 [32.4, 64.9] | 69.0 [51.7, 86.2] |',
    '| Sureon-VLM | 65.7 [48.6, 80.0] | 38.7 [22.6, 54.8] | 47.1 [29.4, 64.7] | 48.6 [32.4, 64.9] | 41.4 [24.1, 58.6] |',
    '| GPT-5.1 (high) | 57.1 [40.0, 74.3] | 61.3 [45.2, 77.4] | 38.2 [23.5, 55.9] | 54.0 [37.8, 70.3] | 37.9 [20.7, 55.2] |',
    '| Sureon-VLM (Sureon-only) | 51.4 [34.3, 68.6] | 25.8 [9.7, 41.9] | 44.1 [26.5, 61.8] | 48.6 [32.4, 64.9] | 41.4 [24.1, 58.6] |',
    '| Gemma 4 | 48.6 [31.4, 65.7] | 41.9 [25.8, 58.1] | 32.4 [17.6, 50.0] | 27.0 [13.5, 40.5] | 51.7 [34.5, 69.0] |',
    '| Qwen3VL-32B-T | 40.0 [22.9, 57.1] | 45.2 [29.0, 61.3] | 41.2 [23.5, 58.8] | 27.0 [13.5, 43.2] | 62.1 [44.8, 79.3] |',
    '| Qwen3VL-8B-I | 28.6 [14.3, 42.9] | 38.7 [22.6, 54.8] | 17.6 [5.9, 32.4] | 16.2 [5.4, 29.7] | 34.5 [17.2, 51.7] |',
    '| Sureon-VLM (Public-only) | 42.9 [25.7, 60.0] | 29.0 [12.9, 45.2] | 14.7 [2.9, 26.5] | 16.2 [5.4, 29.7] | 34.5 [17.2, 51.7] |',
    '| MedGRPO | 25.7 [11.4, 40.0] | 25.8 [12.9, 41.9] | 17.6 [5.9, 32.4] | 16.2 [5.4, 29.7] | 10.3 [0.0, 24.1] |',
    '| Molmo2 | 31.4 [17.1, 48.6] | 16.1 [3.2, 29.0] | 20.6 [8.8, 35.3] | 10.8 [2.7, 21.6] | 24.1 [10.3, 41.4] |',
    '| MedGemma 1.5 | 11.4 [2.9, 22.9] | 6.5 [0.0, 16.1] | 8.8 [0.0, 20.6] | 10.8 [2.7, 21.6] | 24.1 [10.3, 41.4] |',
)

SUREON_TABLE_17 = (
    '| Model | LAR ($n=37$) | SPI ($n=31$) | F ($n=31$) | TO ($n=34$) |',
    '| --- | --- | --- | --- | --- |',
    '| Human | 35.1 [18.9, 51.3] | 71.0 [54.8, 87.1] | 54.8 [38.7, 71.0] | 61.8 [44.1, 76.5] |',
    '| Gemini 3.1 Pro | 56.8 [40.5, 73.0] | 61.3 [45.2, 77.4] | 19.4 [6.5, 32.3] | 64.7 [50.0, 79.4] |',
    '| Sureon-VLM | 43.2 [27.0, 59.5] | 58.1 [41.9, 74.2] | 35.5 [19.4, 51.6] | 52.9 [35.3, 70.6] |',
    '| GPT-5.1 (high) | 46.0 [29.7, 62.2] | 45.2 [29.0, 64.5] | 25.8 [9.7, 41.9] | 52.9 [35.3, 70.6] |',
    '| Sureon-VLM (Sureon-only) | 40.5 [24.3, 56.8] | 61.3 [45.2, 77.4] | 38.7 [22.6, 54.8] | 44.1 [26.5, 61.8] |',
    '| Gemma 4 | 29.7 [16.2, 46.0] | 35.5 [19.4, 51.6] | 16.1 [3.2, 29.0] | 41.2 [23.5, 58.8] |',
    '| Qwen3VL-32B-T | 27.0 [13.5, 40.5] | 19.4 [6.5, 35.5] | 12.9 [3.2, 25.8] | 35.3 [20.6, 52.9] |',
    '| Qwen3VL-8B-I | 18.9 [8.1, 32.4] | 16.1 [3.2, 29.0] | 12.9 [3.2, 25.8] | 26.5 [11.8, 41.2] |',
    '| Sureon-VLM (Public-only) | 10.8 [2.7, 21.6] | 19.4 [6.5, 35.5] | 6.5 [0.0, 16.1] | 14.7 [2.9, 26.5] |',
    '| MedGRPO | 13.5 [2.7, 24.3] | 12.9 [3.2, 25.8] | 6.5 [0.0, 16.1] | 20.6 [8.8, 35.3] |',
    '| Molmo2 | 8.1 [0.0, 18.9] | 12.9 [3.2, 25.8] | 3.2 [0.0, 9.7] | 8.8 [0.0, 17.6] |',
    '| MedGemma 1.5 | 10.8 [2.7, 21.6] | 6.5 [0.0, 16.1] | 6.5 [0.0, 16.1] | 11.8 [2.9, 23.5] |',
)

SUREON_TABLE_18 = (
    '| Model A | Model B | $\\Delta$ Acc. (pts) | $p$ (raw) | $p_{\\text{holm}}$ |',
    '| --- | --- | --- | --- | --- |',
    '| Human | MedGemma 1.5 | 54.18 | $<$0.001 | $<$0.001∗ |',
    '| Human | Molmo2 | 49.83 | $<$0.001 | $<$0.001∗ |',
    '| Human | MedGRPO | 48.16 | $<$0.001 | $<$0.001∗ |',
    '| Human | Sureon-VLM (Public-only) | 44.15 | $<$0.001 | $<$0.001∗ |',
    '| Human | Qwen3VL-8B-I | 41.81 | $<$0.001 | $<$0.001∗ |',
    '| Gemini 3.1 Pro | MedGemma 1.5 | 41.47 | $<$0.001 | $<$0.001∗ |',
    '| MedGemma 1.5 | Sureon-VLM | -37.46 | $<$0.001 | $<$0.001∗ |',
    '| Gemini 3.1 Pro | Molmo2 | 37.12 | $<$0.001 | $<$0.001∗ |',
    '| GPT-5.1 (high) | MedGemma 1.5 | 36.12 | $<$0.001 | $<$0.001∗ |',
    '| Gemini 3.1 Pro | MedGRPO | 35.45 | $<$0.001 | $<$0.001∗ |',
    '| MedGemma 1.5 | Sureon-VLM (Sureon-only) | -33.44 | $<$0.001 | $<$0.001∗ |',
    '| Molmo2 | Sureon-VLM | -33.11 | $<$0.001 | $<$0.001∗ |',
    '| GPT-5.1 (high) | Molmo2 | 31.77 | $<$0.001 | $<$0.001∗ |',
    '| Gemini 3.1 Pro | Sureon-VLM (Public-only) | 31.44 | $<$0.001 | $<$0.001∗ |',
    '| MedGRPO | Sureon-VLM | -31.44 | $<$0.001 | $<$0.001∗ |',
    '| Human | Qwen3VL-32B-T | 30.77 | $<$0.001 | $<$0.001∗ |',
    '| GPT-5.1 (high) | MedGRPO | 30.10 | $<$0.001 | $<$0.001∗ |',
    '| Human | Gemma 4 | 29.10 | $<$0.001 | $<$0.001∗ |',
    '| Gemini 3.1 Pro | Qwen3VL-8B-I | 29.10 | $<$0.001 | $<$0.001∗ |',
    '| Molmo2 | Sureon-VLM (Sureon-only) | -29.10 | $<$0.001 | $<$0.001∗ |',
    '| MedGRPO | Sureon-VLM (Sureon-only) | -27.42 | $<$0.001 | $<$0.001∗ |',
    '| Sureon-VLM (Public-only) | Sureon-VLM | -27.42 | $<$0.001 | $<$0.001∗ |',
    '| GPT-5.1 (high) | Sureon-VLM (Public-only) | 26.09 | $<$0.001 | $<$0.001∗ |',
    '| Qwen3VL-8B-I | Sureon-VLM | -25.08 | $<$0.001 | $<$0.001∗ |',
    '| Gemma 4 | MedGemma 1.5 | 25.08 | $<$0.001 | $<$0.001∗ |',
    '| GPT-5.1 (high) | Qwen3VL-8B-I | 23.75 | $<$0.001 | $<$0.001∗ |',
    '| Qwen3VL-32B-T | MedGemma 1.5 | 23.41 | $<$0.001 | $<$0.001∗ |',
    '| Sureon-VLM (Sureon-only) | Sureon-VLM (Public-only) | 23.41 | $<$0.001 | $<$0.001∗ |',
    '| Qwen3VL-8B-I | Sureon-VLM (Sureon-only) | -21.07 | $<$0.001 | $<$0.001∗ |',
    '| Human | Sureon-VLM (Sureon-only) | 20.74 | $<$0.001 | $<$0.001∗ |',
    '| Gemma 4 | Molmo2 | 20.74 | $<$0.001 | $<$0.001∗ |',
    '| Gemma 4 | MedGRPO | 19.06 | $<$0.001 | $<$0.001∗ |',
    '| Qwen3VL-32B-T | Molmo2 | 19.06 | $<$0.001 | $<$0.001∗ |',
    '| Human | GPT-5.1 (high) | 18.06 | $<$0.001 | $<$0.001∗ |',
    '| Gemini 3.1 Pro | Qwen3VL-32B-T | 18.06 | $<$0.001 | $<$0.001∗ |',
    '| Qwen3VL-32B-T | MedGRPO | 17.39 | $<$0.001 | $<$0.001∗ |',
    '| Gemini 3.1 Pro | Gemma 4 | 16.39 | $<$0.001 | $<$0.001∗ |',
    '| Gemma 4 | Sureon-VLM (Public-only) | 15.05 | $<$0.001 | $<$0.001∗ |',
    '| Qwen3VL-8B-I | MedGemma 1.5 | 12.37 | $<$0.001 | $<$0.001∗ |',
    '| Human | Sureon-VLM | 16.72 | $<$0.001 | 0.0027∗ |',
    '| Qwen3VL-32B-T | Sureon-VLM (Public-only) | 13.38 | $<$0.001 | 0.0027∗ |',
    '| Qwen3VL-8B-I | Gemma 4 | -12.71 | $<$0.001 | 0.0027∗ |',
    '| Qwen3VL-32B-T | Sureon-VLM | -14.05 | $<$0.001 | 0.0072∗ |',
    '| Qwen3VL-32B-T | Qwen3VL-8B-I | 11.04 | $<$0.001 | 0.0092∗ |',
    '| GPT-5.1 (high) | Qwen3VL-32B-T | 12.71 | $<$0.001 | 0.0110∗ |',
    '| MedGemma 1.5 | Sureon-VLM (Public-only) | -10.03 | $<$0.001 | 0.0126∗ |',
    '| Gemma 4 | Sureon-VLM | -12.37 | $<$0.001 | 0.0140∗ |',
    '| Human | Gemini 3.1 Pro | 12.71 | 0.0013 | 0.0247∗ |',
    '| GPT-5.1 (high) | Gemma 4 | 11.04 | 0.0013 | 0.0247∗ |',
    '| Qwen3VL-8B-I | Molmo2 | 8.03 | 0.0022 | 0.0374∗ |',
    '| Qwen3VL-32B-T | Sureon-VLM (Sureon-only) | -10.03 | 0.0064 | 0.1024 |',
    '| Gemma 4 | Sureon-VLM (Sureon-only) | -8.36 | 0.0261 | 0.3915 |',
    '| Gemini 3.1 Pro | Sureon-VLM (Sureon-only) | 8.03 | 0.0323 | 0.4522 |',
    '| MedGemma 1.5 | MedGRPO | -6.02 | 0.0414 | 0.5382 |',
    '| Qwen3VL-8B-I | MedGRPO | 6.35 | 0.0448 | 0.5382 |',
    '| Molmo2 | Sureon-VLM (Public-only) | -5.69 | 0.0533 | 0.5863 |',
    '| Molmo2 | MedGemma 1.5 | 4.35 | 0.1175 | 1.0000 |',
    '| GPT-5.1 (high) | Gemini 3.1 Pro | -5.35 | 0.1448 | 1.0000 |',
    '| MedGRPO | Sureon-VLM (Public-only) | -4.01 | 0.2007 | 1.0000 |',
    '| Sureon-VLM (Sureon-only) | Sureon-VLM | -4.01 | 0.2185 | 1.0000 |',
    '| Gemini 3.1 Pro | Sureon-VLM | 4.01 | 0.3232 | 1.0000 |',
    '| Qwen3VL-8B-I | Sureon-VLM (Public-only) | 2.34 | 0.4944 | 1.0000 |',
    '| GPT-5.1 (high) | Sureon-VLM (Sureon-only) | 2.68 | 0.5363 | 1.0000 |',
    '| Molmo2 | MedGRPO | -1.67 | 0.6305 | 1.0000 |',
    '| Qwen3VL-32B-T | Gemma 4 | -1.67 | 0.6718 | 1.0000 |',
    '| GPT-5.1 (high) | Sureon-VLM | -1.34 | 0.7926 | 1.0000 |',
)

SURGHI_TABLE_8 = (
    'Phase (↑)Step (↑) AccuracyF1 AccuracyF1 Cholec80 SurgCLIP (β) 58.0 39.4— SurgCLIP ∗ (β) 57.8 34.5— '
    'AutoLaparo SurgCLIP (β) 55.7 46.0— SurgCLIP ∗ (β) 58.0 44.3— HeiChole SurgCLIP (β) 57.0 44.0— '
    'SurgCLIP ∗ (β) 63.6 35.5— BernBypass70 SurgCLIP (β) 18.3 15.1— SurgCLIP ∗ (β) 23.9 17.4— '
    'StrasbyPass70 SurgCLIP (β) 31.2 26.1— SurgCLIP ∗ (β) 29.5 22.7— GraSP SurgCLIP (β) 34.8 28.014.2 '
    '11.1 SurgCLIP ∗ (β) 25.1 17.717.99.0'
)

SURGHI_TABLE_9 = (
    'Phase (↑) Step (↑) Multi-level (↑) MIPO Lorentz only13.811.912.8 + Entailment cones9.320.613.8 + '
    'Triplet sampler16.822.419.4 + Both (HYPERSURG)20.917.619.2 StrasbyPass70 Lorentz only20.424.122.2 + '
    'Entailment cones24.320.222.2 + Triplet sampler23.525.424.4 + Both (HYPERSURG)30.232.031.1 '
    'BernBypass70 Lorentz only12.617.714.9 + Entailment cones13.817.415.5 + Triplet sampler13.021.116.6 + '
    'Both (HYPERSURG)17.429.722.7 GraSP Lorentz only24.212.917.7 + Entailment cones26.722.024.2 + Triplet '
    'sampler28.113.819.7 + Both (HYPERSURG)26.614.719.8 Overall Lorentz only17.816.716.9 + Entailment '
    'cones18.520.118.9 + Triplet sampler20.420.720.0 + Both (HYPERSURG)23.823.523.2'
)

SURGHI_TABLE_10 = (
    'Phase (↑) Step (↑) Multi-level (↑) MIPO λ=0.0118.617.418.0 λ=0.0522.820.021.4 λ=0.120.917.619.2 '
    'λ=0.217.523.620.3 λ=0.313.719.916.5 StrasbyPass70 λ=0.0122.126.524.2 λ=0.0527.231.129.1 '
    'λ=0.130.232.031.1 λ=0.226.125.425.7 λ=0.328.832.330.5 BernBypass70 λ=0.0110.222.815.2 '
    'λ=0.0518.226.321.9 λ=0.117.429.722.7 λ=0.217.723.420.4 λ=0.317.628.622.4 GraSP λ=0.0131.118.323.9 '
    'λ=0.0533.810.018.4 λ=0.126.614.719.8 λ=0.235.717.725.1 λ=0.328.616.121.5 Overall λ=0.0120.521.320.3 '
    'λ=0.0525.521.922.7 λ=0.123.823.523.2 λ=0.224.322.522.9 λ=0.322.724.222.2'
)

MEDHORIZON_FIG_7 = (
    'Figure 7 diagnoses evidence utilization across four settings: Random (25% baseline), Text (no visual '
    'input), Uniform (full-procedure sampling), and GT-images (human-verified oracle frames). This '
    'separates language shortcuts, temporal retrieval, and visual interpretation. Results show MedHorizon '
    'is not solvable by language priors alone; text-only accuracy mirrors the random baseline, while '
    'uniform video input yields limited, unstable gains. Notably, MedGRPO drops to 13.6% on Semantic '
    'tasks under uniform sampling, suggesting irrelevant frames can mislead understanding when sparse '
    'evidence is missed. The Uniform-to-GT-images gap highlights a retrieval bottleneck, particularly for '
    'Semantic reasoning: MedGRPO improves from 13.6% to 33.9%, and Lingshu-7B from 22.9% to 38.0%. '
    'However, even with oracle evidence, all models remain below 40%, proving retrieval is only the '
    'initial failure mode. Models must still identify subtle findings, distinguish similar anatomy, and '
    'bind observations to phases or events. Thus, RQ2 exposes a dual bottleneck: MLLMs require both '
    'evidence-aware temporal retrieval and clinically grounded visual verification.'
)

MEDHORIZON_FIG_8_9 = (
    'We analyze the mechanisms behind these bottlenecks by diagnosing how models handle temporal '
    'structure and visual attention distribution. Figure 8 perturbs frame order to measure whether models '
    'use procedural chronology, while Figure 9 follows ViLAMP Cheng et al. (2025) to diagnose whether '
    'attention concentrates on informative frame- and patch-level evidence. For each video-question pair, '
    'we sample 128 frames, aggregate query-to-visual attention into frame scores, and plot cumulative '
    'attention after ranking frames by attention. For patch-level analysis, we use the top 32 attended '
    'frames as keyframes and compare patches in the remaining 96 frames with their corresponding patches '
    'in the nearest preceding keyframe. Thus, the left half of Figure 9 measures temporal redundancy, and '
    'the right half measures spatial redundancy. Figure 8 shows that current models use temporal order '
    'only weakly. Reversing, block- shuffling, or locally shuffling frames reduces Qwen3-VL-8B from 26.5% '
    'to 24.2–24.5% overall, with larger losses on workflow- or context-sensitive tasks such as PR, IR, '
    'QA, LLS, and CPR. This confirms that chronology matters, but the small overall drop suggests that '
    'the model mainly captures coarse temporal cues rather than robust procedural structure. Figure 9 '
    'further shows that medical videos break the general-video intuition that attention should collapse '
    'onto a few salient frames. The frame-level cumulative curves increase smoothly, so Qwen3-VL and '
    'Lingshu still require 76.7% and 85.6% of temporal units to accumulate 90% attention, and MedGRPO '
    'remains similarly diffuse. Meanwhile, Qwen3-VL-8B and Lingshu-7B maintain very high frame similarity '
    'around 0.90, while MedGRPO is slightly lower, suggesting that medical-video training may improve '
    'frame discriminability but not evidence-selective attention. The patch-level panels show the same '
    'issue spatially: high-attention patches remain highly similar to keyframe patches, especially for '
    'Lingshu-7B. We refer to this phenomenon as attention drift: under strong spatiotemporal redundancy, '
    'model attention drifts toward visually repetitive but clinically non-decisive frames and patches, '
    'rather than reliably concentrating on sparse answer-relevant evidence. Thus, medical redundancy is '
    'deceptive: many frames and patches look alike, but the answer often depends on a subtle outlier that '
    'current attention patterns fail to isolate.'
)

MEDHORIZON_FIG_10 = (
    'Figure 10 evaluates whether sampling mitigates long-video challenges. Uniform sampling remains '
    'stable by preserving procedural coverage but is evidence-agnostic, often missing sparse findings. '
    'Conversely, change-focused samplers improve short-window tasks like RL and Size but hinder '
    'workflow-sensitive tasks (e.g., PR), showing that visual dynamism does not guarantee clinical '
    'relevance. Table 2 confirms specialized sampling is promising: with 128 frames, AKS, ViLAMP, and '
    'WFS-SB achieve 27.3%, 27.0%, and 28.1% accuracy, outperforming general MLLMs. Gains are localized; '
    'notably, WFS-SB reaches 32.8% on Site. This reflects their designs: ViLAMP prioritizes keyframe '
    'fidelity via compression, while WFS-SB employs semantic-boundary selection to retain structured '
    'temporal context. These improvements remain modest and task-dependent. The methods still '
    'underperform on tasks requiring global procedural continuity or multi-step aggregation, such as WR '
    'and RSR, where aggressive keyframe selection may discard temporal context for reasoning. Sampling '
    'can reduce redundancy and recover some sparse evidence, but cannot solve long medical video '
    'understanding alone. Future methods need clinically evidence-aware sampling that preserves global '
    'procedural structure, retrieves weak local findings, and verifies anatomical and temporal context '
    'before reasoning.'
)
