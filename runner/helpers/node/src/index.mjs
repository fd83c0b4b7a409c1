// ESM entry: the implementation is the CommonJS file so that require() and import share it.
import helper from './index.cjs';

export const { Output, output, formatValue, DEFAULT_OUTPUT_DIR, DEFAULT_OUTPUT_FILE } = helper;
export default helper;
