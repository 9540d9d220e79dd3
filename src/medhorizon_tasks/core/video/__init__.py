"""Video: frame-exact decoding of a frame plan, the file-vs-metadata policy, per-item frame
outcomes, the decoded-frame cache and the picture-change signal."""
