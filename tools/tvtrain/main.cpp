// tvtrain: a folder of photos (or a .zip of one) -> a trained, evaluated model (.tvb).
#include "tools/common/cli.h"
#include "tvtrain.h"

int main(int argc, char** argv) {
  return tvcli::run_main("tvtrain", tvtrain_main, argc, argv);
}
