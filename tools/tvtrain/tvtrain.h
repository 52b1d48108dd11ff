#pragma once
// Runs the tvtrain command line; returns the exit code (throws tvh::Error on bad input).
int tvtrain_main(int argc, char** argv);
