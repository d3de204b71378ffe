// The honest baseline for bench/pinocchio_cpp.py: Pinocchio's joint-torque regressor and RNEA
// called from a C++ loop over samples, one thread, the same robot and the same states as dynid.
//
// Input (binary, little endian; written by bench/pinocchio_cpp.py):
//   int64 n, N, repeats, n_check
//   per joint: int64 parent (-1 = base), int64 kind (0 revolute, 1 prismatic),
//              double axis[3], placement rotation[9] (row major), placement translation[3],
//              inertial[10] (dynid order m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz; about the
//              joint frame origin)
//   double gravity[3]; double q[N n], dq[N n], ddq[N n] (sample major)
// Output: one line per algorithm on stdout, "name best median best_cpu" (ns per sample: wall
// clock best and median of the passes, and the best pass in CPU time of this process),
// and a binary file of tau (N n) then Y of the first n_check samples (n x 10 n each, row
// major, dynid's column order) for the agreement check.
//
// Build (bench/pinocchio_cpp.py does it): g++ -O3 -march=native -DNDEBUG with the Boost
// definitions of Pinocchio's CMake config, headers from the pin and cmeel-eigen wheels.

#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/regressor.hpp>
#include <pinocchio/algorithm/rnea.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace pin = pinocchio;

template <typename T> T read(std::ifstream& in) {
  T value;
  in.read(reinterpret_cast<char*>(&value), sizeof(T));
  return value;
}

static pin::JointModel joint_model(int64_t kind, const Eigen::Vector3d& axis) {
  // The fastest joint Pinocchio offers for the axis: RX/RY/RZ (PX/PY/PZ) when it is a unit axis.
  for (int a = 0; a < 3; ++a) {
    if (axis[a] == 1.0 && axis[(a + 1) % 3] == 0.0 && axis[(a + 2) % 3] == 0.0) {
      if (kind == 0) {
        if (a == 0) return pin::JointModelRX();
        if (a == 1) return pin::JointModelRY();
        return pin::JointModelRZ();
      }
      if (a == 0) return pin::JointModelPX();
      if (a == 1) return pin::JointModelPY();
      return pin::JointModelPZ();
    }
  }
  if (kind == 0) return pin::JointModelRevoluteUnaligned(axis);
  return pin::JointModelPrismaticUnaligned(axis);
}

struct Timing {
  double best, median, best_cpu;
};

template <typename F> Timing time_loop(F&& body, int64_t samples, int64_t repeats) {
  std::vector<double> ns, cpu;
  for (int64_t r = 0; r < repeats; ++r) {
    const std::clock_t c0 = std::clock();
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < samples; ++k) body(k);
    auto t1 = std::chrono::steady_clock::now();
    const std::clock_t c1 = std::clock();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / samples);
    cpu.push_back(1e9 * double(c1 - c0) / CLOCKS_PER_SEC / samples);
  }
  std::sort(ns.begin(), ns.end());
  return {ns.front(), ns[ns.size() / 2], *std::min_element(cpu.begin(), cpu.end())};
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: pinocchio_loop INPUT OUTPUT\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const int64_t n = read<int64_t>(in), N = read<int64_t>(in), repeats = read<int64_t>(in),
                n_check = read<int64_t>(in);
  pin::Model model;
  std::vector<pin::JointIndex> ids;
  const int order[10] = {0, 1, 2, 3, 4, 5, 7, 6, 8, 9};  // dynid <-> Pinocchio (Ixx Ixy Iyy Ixz Iyz Izz)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t parent = read<int64_t>(in), kind = read<int64_t>(in);
    Eigen::Vector3d axis, translation;
    Eigen::Matrix3d rotation;
    Eigen::Matrix<double, 10, 1> inertial, dyn;
    for (int a = 0; a < 3; ++a) axis[a] = read<double>(in);
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) rotation(a, b) = read<double>(in);
    for (int a = 0; a < 3; ++a) translation[a] = read<double>(in);
    for (int a = 0; a < 10; ++a) inertial[a] = read<double>(in);
    for (int a = 0; a < 10; ++a) dyn[a] = inertial[order[a]];
    const pin::JointIndex pid = parent < 0 ? 0 : ids[parent];
    const pin::JointIndex jid =
        model.addJoint(pid, joint_model(kind, axis), pin::SE3(rotation, translation), "j" + std::to_string(i));
    model.appendBodyToJoint(jid, pin::Inertia::FromDynamicParameters(dyn), pin::SE3::Identity());
    ids.push_back(jid);
  }
  for (int a = 0; a < 3; ++a) model.gravity.linear()[a] = read<double>(in);
  std::vector<double> q(N * n), dq(N * n), ddq(N * n);
  in.read(reinterpret_cast<char*>(q.data()), sizeof(double) * N * n);
  in.read(reinterpret_cast<char*>(dq.data()), sizeof(double) * N * n);
  in.read(reinterpret_cast<char*>(ddq.data()), sizeof(double) * N * n);
  if (!in) {
    std::cerr << "pinocchio_loop: input file too short\n";
    return 2;
  }
  pin::Data data(model);
  using Vec = Eigen::Map<const Eigen::VectorXd>;
  std::vector<double> tau(N * n);
  double sink = 0.0;  // keeps the optimizer from dropping the calls
  auto regressor = [&](int64_t k) {
    pin::computeJointTorqueRegressor(model, data, Vec(&q[k * n], n), Vec(&dq[k * n], n), Vec(&ddq[k * n], n));
    sink += data.jointTorqueRegressor(0, 0);
  };
  auto rnea = [&](int64_t k) {
    pin::rnea(model, data, Vec(&q[k * n], n), Vec(&dq[k * n], n), Vec(&ddq[k * n], n));
    sink += data.tau[0];
  };
  for (int64_t k = 0; k < std::min<int64_t>(N, 1000); ++k) regressor(k), rnea(k);  // warm up
  const auto t_reg = time_loop(regressor, N, repeats);
  const auto t_rnea = time_loop(rnea, N, repeats);
  std::printf("regressor %.3f %.3f %.3f\nrnea %.3f %.3f %.3f\nsink %g\n", t_reg.best, t_reg.median,
              t_reg.best_cpu, t_rnea.best, t_rnea.median, t_rnea.best_cpu, sink);
  std::ofstream out(argv[2], std::ios::binary);
  for (int64_t k = 0; k < N; ++k) {
    pin::rnea(model, data, Vec(&q[k * n], n), Vec(&dq[k * n], n), Vec(&ddq[k * n], n));
    out.write(reinterpret_cast<const char*>(data.tau.data()), sizeof(double) * n);
  }
  std::vector<double> row(10 * n);
  for (int64_t k = 0; k < std::min(N, n_check); ++k) {
    pin::computeJointTorqueRegressor(model, data, Vec(&q[k * n], n), Vec(&dq[k * n], n), Vec(&ddq[k * n], n));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j)
        for (int a = 0; a < 10; ++a) row[10 * j + order[a]] = data.jointTorqueRegressor(i, 10 * j + a);
      out.write(reinterpret_cast<const char*>(row.data()), sizeof(double) * 10 * n);
    }
  }
  return out ? 0 : 1;
}
