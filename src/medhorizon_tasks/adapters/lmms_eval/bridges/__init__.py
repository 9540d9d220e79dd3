"""Native-video bridges: lmms-eval's own model wrappers, given the planned frames as the model's video input.

The tasks hand every model a :class:`~medhorizon_tasks.core.video.planned_frames.PlannedFrames`
list (the frames of the protocol's plan, with their real times). lmms-eval's
wrappers take such a list as N unrelated images, or drop or refuse it (see
:mod:`.guard`). Each bridge here subclasses one wrapper and turns the list into
that model's native video input, with the real times where the model takes
them; any other visual (another task's video path or images) goes to the
wrapper untouched.

========================== ================================ =====================================================
``--model``                subclass of (lmms-eval 0.7.3)    what the model receives for planned frames
========================== ================================ =====================================================
medhorizon_qwen2_5_vl      simple ``qwen2_5_vl``            one video; ``second_per_grid_ts`` = 2 x mean spacing
medhorizon_qwen3_vl        simple ``qwen3_vl``              one video; ``<t seconds>`` labels at the planned times
medhorizon_internvl3       ``internvl3``                    ``Frame1: <image>`` ... one 448 px tile per frame
medhorizon_internvl3_5     ``internvl3_5``                  as ``medhorizon_internvl3``
medhorizon_videollama3     ``videollama3``                  one video with its ``timestamps``
medhorizon_llava_onevision ``llava_onevision``              one video tensor of n frames (``modalities=video``)
medhorizon_llava_vid       ``llava_vid``                    one video + LLaVA-Video's time instruction
medhorizon_longva          ``longva``                       one video tensor of n frames
medhorizon_gemma4          ``gemma4``                       one video with ``VideoMetadata`` (``mm:ss`` labels)
medhorizon_molmo2          ``gemma4`` (its loading only)    one video with ``VideoMetadata`` (seconds labels)
medhorizon_gemma3          ``gemma3``                       images, each after a ``<t seconds>`` text (MedGemma)
medhorizon_minicpm_v       ``minicpm_v``                    the model card's video message to ``chat``
medhorizon_videochat_flash ``videochat_flash``              its own ``chat``, its loader answering the plan
medhorizon_hulu_med        ``videollama3`` (loading, path)  one video with its ``timestamps``, ``modals=[video]``
medhorizon_openai          simple ``openai``                frames as images, each after a ``<t seconds>`` text;
                                                            ``frames_as=video``: one frame-sequence video (vLLM)
========================== ================================ =====================================================

A benchmark that fixes its prompt's layout of text and frames
(``PlannedFrames.interleaved``: Sureon, appendix D.1 and Fig. 17, each frame
right after its ``Frame k at t s:`` line) gets exactly that layout from the
bridges its paper rows use: each frame one image where the layout places it
(``medhorizon_qwen2_5_vl``, ``medhorizon_qwen3_vl``, ``medhorizon_gemma4``,
``medhorizon_molmo2`` through the model's image input instead of its video
input; ``medhorizon_gemma3`` and ``medhorizon_openai`` without their time
labels), one ``<image>`` tag per frame where it places it
(``medhorizon_internvl3`` / ``_3_5``); :func:`.frames.interleaved_content`.

All are "simple" lmms-eval models (``is_simple``): on tasks of other packages
they behave as ``--model <wrapper> --force_simple``. The paper's per-model
settings (Tables 6-7) that use them are data in
:mod:`medhorizon_tasks.benchmarks.medhorizon.model_settings`
(``medhorizon-tasks protocol ROW`` prints the command line).

Modules: :mod:`.manifest` (what the ``medhorizon_bridges`` entry point of
``lmms_eval.models`` registers; imports nothing), :mod:`.frames` (times and
pixel budgets, framework-free), :mod:`.base` (routing planned frames to the
bridge and everything else to the wrapper), :mod:`.keyed_video` (the same
through a LLaVA-style wrapper's own ``load_video``), one module per model
family (:mod:`.qwen`, :mod:`.internvl`, :mod:`.videollama3`, :mod:`.llava`,
:mod:`.longva`, :mod:`.gemma`, :mod:`.minicpm`, :mod:`.videochat`, :mod:`.openai` with
:mod:`.vllm_video`), and :mod:`.guard` (the start-up check that
refuses a built-in wrapper known to mishandle a frame list). :mod:`.attention` measures a Qwen bridge's
query-to-frame attention in a separate prefill pass (MedHorizon Fig. 9, ``diagnose attention``).
"""
