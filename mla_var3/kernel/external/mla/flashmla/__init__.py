"""FlashMLA (deepseek-ai/FlashMLA) MLA kernels."""
