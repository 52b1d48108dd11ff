#pragma once
// Runs the tvtrain command line; returns the exit code (throws tvh::Error on bad input).
int tvtrain_main(int argc, char** argv);
// `tvtrain classify MODEL IMAGE...`: the label and class probabilities of each image file.
int tvtrain_classify(int argc, char** argv);
// `tvtrain detect MODEL IMAGE...`: the objects a detector finds in each image file.
int tvtrain_detect(int argc, char** argv);
