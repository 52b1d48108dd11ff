#include "inputs.h"

#include "host/base/error.h"
#include "host/base/text.h"

namespace tvquant {

tvh::LoadedModel load_float_model(const std::string& path, tvh::Tasks tasks) {
  tvh::LoadedModel m = tvh::load_model(path, tvh::RawOptions(), tasks);
  if (m.int8) throw tvh::Error(path + " is already an int8 model; give the float model it was made from.");
  return m;
}

tvh::Dataset load_for_model(const std::string& path, tvh::LoadedModel& m, int threads,
                            const std::vector<tvh::NamedPath>& outputs) {
  tvh::DatasetOptions o;
  o.path = path;
  o.outputs = outputs;
  if (m.format == "tvb") o.classes = m.labels;
  o.height = m.plan->input.h;
  o.width = m.plan->input.w;
  o.channels = m.plan->input.c;
  o.order = m.plan->desc.input.order;
  o.threads = threads;
  tvh::Dataset ds = tvh::load_dataset(o);
  if ((int)ds.classes.size() != m.plan->desc.num_classes)
    throw tvh::Error(path + " has " + std::to_string(ds.classes.size()) + " classes " + tvh::join(ds.classes) +
                     " but the model has " + std::to_string(m.plan->desc.num_classes) + ".");
  if (m.format != "tvb") m.labels = ds.classes;
  return ds;
}

}  // namespace tvquant
