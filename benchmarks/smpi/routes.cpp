// Print SimGrid's route between every ordered pair of hosts of a platform:
// one line per pair, "SRC DST LINK...", hosts in name order.
// Built and run by benchmarks/topology_routes_vs_simgrid.py.
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <iostream>

int main(int argc, char** argv)
{
  simgrid::s4u::Engine engine(&argc, argv);
  engine.load_platform(argv[1]);
  auto hosts = engine.get_all_hosts();
  std::sort(hosts.begin(), hosts.end(),
            [](const simgrid::s4u::Host* x, const simgrid::s4u::Host* y) { return x->get_name() < y->get_name(); });
  for (auto* src : hosts)
    for (auto* dst : hosts) {
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      src->route_to(dst, links, &latency);
      std::cout << src->get_name() << ' ' << dst->get_name();
      for (const auto* link : links)
        std::cout << ' ' << link->get_name();
      std::cout << '\n';
    }
  return 0;
}
