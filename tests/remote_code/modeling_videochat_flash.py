"""Recording stand-in for VideoChat-Flash's remote ``modeling_videochat_flash.py``: a module-level
``load_video(video_path, max_num_frames=..., media_dict=...)`` returning ``(frames, time_msg)`` (frames an
(n, h, w, 3) uint8 array) and a model whose ``chat(video_path, tokenizer, user_prompt, chat_history=None,
return_history=True, max_num_frames=512, media_dict=None, generation_config={})`` calls it through the module's
global name, as the real one does, and prompts ``<image>\\n{time_msg} {user_prompt}``.

The real ``load_video`` decodes the file with decord; this one only reads a file that exists (the bridge must
replace it for planned frames, so a call here is recorded and fails as the real one would on a non-file).
lmms-eval's ``videochat_flash`` wrapper calls ``.half().cuda()`` on the model: ``cuda`` is a no-op here so the
run stays on the CPU.
"""

import os

from .recording import RecordingModel, frame_facts, record


def load_video(video_path, max_num_frames=512, media_dict=None):
    record("load_video", video_path=str(video_path), max_num_frames=max_num_frames)
    if not os.path.isfile(video_path):
        raise FileNotFoundError(video_path)
    raise NotImplementedError("the recording stand-in decodes no files")


class VideoChatFlashQwenForCausalLM(RecordingModel):
    def cuda(self, *args, **kwargs):  # CPU test run: lmms-eval's wrapper calls .half().cuda()
        return self

    def chat(self, video_path, tokenizer, user_prompt, chat_history=None, return_history=True,
             max_num_frames=512, media_dict=None, generation_config=None):
        frames, time_msg = load_video(video_path, max_num_frames=max_num_frames, media_dict=media_dict)
        prompt = f"<image>\n{time_msg.strip()} {user_prompt}"
        record("chat", frames=frame_facts(frames), array_shape=list(frames.shape), time_msg=time_msg.strip(),
               prompt=prompt, max_num_frames=max_num_frames, generation_config=dict(generation_config or {}),
               local_num_frames=self.config.mm_local_num_frames, dtype=str(self.weight.dtype),
               prompt_tokens=len(tokenizer(prompt)["input_ids"]))
        answer = self.config.answer
        return (answer, [*(chat_history or []), (user_prompt, answer)]) if return_history else answer
