#pragma once
// Runs `tvquant MODEL --calib DATASET -o OUT` (quantization); returns the exit code, throws tvh::Error on bad input.
int tvquant_main(int argc, char** argv);
// Runs `tvquant prune MODEL DATASET --ratio R -o OUT`; argv[0] is "prune".
int tvquant_prune_main(int argc, char** argv);
