//! Deterministic random distributions: uniform, normal, log-normal, Zipf, and file-size sets.
//!
//! Same seed ⇒ same numbers on every host. `f64::exp`/`ln` call the platform libm, whose last-ulp
//! results differ between glibc, musl, macOS and Windows, and one ulp is enough to move a Zipf
//! sample across an item boundary. So the transcendental functions used here are written below in
//! plain IEEE arithmetic (+ − × ÷ and sqrt are correctly rounded everywhere), and uniforms are
//! built from raw `next_u64` bits rather than through `rand`'s float conversion, which could
//! change between crate versions.

use rand::RngCore;

/// Uniform in [0, 1), 53 random bits.
pub fn uniform01<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Standard normal variate by the Box–Muller transform in Marsaglia's polar form, which needs only
/// a logarithm and a square root (no sine/cosine whose libm rounding varies). The second variate of
/// each pair is dropped so that the function is stateless.
pub fn standard_normal<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let u = 2.0 * uniform01(rng) - 1.0;
        let v = 2.0 * uniform01(rng) - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * (-2.0 * ln(s) / s).sqrt();
        }
    }
}

/// Log-normal variate whose *mean* (not median) is `mean`: `exp(mu + sigma Z)` with
/// `mu = ln(mean) − sigma²/2`.
pub fn lognormal<R: RngCore + ?Sized>(rng: &mut R, mean: f64, sigma: f64) -> f64 {
    let mu = ln(mean) - 0.5 * sigma * sigma;
    exp(mu + sigma * standard_normal(rng))
}

/// `count` log-normally spread sizes with mean ≈ `mean_bytes`, each ≥ 1 byte.
pub fn lognormal_sizes<R: RngCore + ?Sized>(rng: &mut R, count: usize, mean_bytes: u64, sigma: f64) -> Vec<u64> {
    let mean = mean_bytes.max(1) as f64;
    (0..count)
        .map(|_| {
            let x = lognormal(rng, mean, sigma) + 0.5;
            // `as` saturates, so a freak draw past u64::MAX stays finite.
            (x as u64).max(1)
        })
        .collect()
}

/// A file tree's worth of sizes: `total_bytes / mean_bytes` files (at least one), log-normally
/// spread with shape `sigma`, each ≥ 1 byte, summing to exactly `total_bytes`. Empty when
/// `total_bytes` is 0.
///
/// The draws are used as weights: file `i` gets 1 byte plus its share of the rest, cut at rounded
/// cumulative sums so the pieces add up exactly without a sort.
pub fn file_tree_sizes<R: RngCore + ?Sized>(rng: &mut R, total_bytes: u64, mean_bytes: u64, sigma: f64) -> Vec<u64> {
    if total_bytes == 0 {
        return Vec::new();
    }
    let count = (total_bytes / mean_bytes.max(1)).clamp(1, total_bytes);
    let mean = total_bytes as f64 / count as f64;
    let weights: Vec<f64> = (0..count).map(|_| lognormal(rng, mean, sigma)).collect();
    let sum: f64 = weights.iter().sum();
    let rest = total_bytes - count;
    let mut out = Vec::with_capacity(count as usize);
    let mut prefix = 0.0;
    let mut cut_prev = 0u64;
    for (i, w) in weights.iter().enumerate() {
        prefix += w;
        // Rounding is monotone, so the cuts never go backwards even in floating point.
        let cut = if i + 1 == weights.len() { rest } else { ((prefix / sum * rest as f64) as u64).min(rest) };
        out.push(1 + cut - cut_prev);
        cut_prev = cut;
    }
    out
}

/// Zipf distribution over items `0..n`: `P(k) ∝ (k + 1)^−theta`, item 0 the most popular.
///
/// Rejection-inversion sampling (Hörmann & Derflinger, 1996): invert the integral `H` of the
/// continuous density `x^−theta` over `[0.5, n + 0.5]`, round to the nearest integer, and accept
/// when the sample falls under the discrete bar. O(1) setup, no per-item table, O(1) expected time
/// per sample (fewer than ~1.1 rounds on average) for any `theta > 0` and `n` up to 2^64.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zipf {
    n: u64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    /// Samples this close to their integer are accepted without evaluating `H`.
    s: f64,
}

/// Invalid distribution parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid distribution parameters: {0}")]
pub struct DistError(pub &'static str);

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Result<Zipf, DistError> {
        if n == 0 {
            return Err(DistError("Zipf needs n >= 1 items"));
        }
        if !(theta > 0.0 && theta.is_finite()) {
            return Err(DistError("Zipf exponent theta must be finite and > 0"));
        }
        let mut z = Zipf { n, theta, h_x1: 0.0, h_n: 0.0, s: 0.0 };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.s = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        Ok(z)
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// An item in `0..n`.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u64 {
        loop {
            let u = self.h_n + uniform01(rng) * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            // 1-based item nearest to x.
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.s || u >= self.big_h(kf + 0.5) - self.h(kf) {
                return k - 1;
            }
        }
    }

    /// Exact probability of item `k` for small `n` (tests, reports); O(n).
    pub fn pmf_exact(&self, k: u64) -> f64 {
        let norm: f64 = (1..=self.n).map(|i| self.h(i as f64)).sum();
        self.h((k + 1) as f64) / norm
    }

    fn h(&self, x: f64) -> f64 {
        exp(-self.theta * ln(x))
    }

    /// `∫₁ˣ t^−theta dt = (x^(1−theta) − 1)/(1−theta)`, written to stay exact as theta → 1
    /// (where it becomes `ln x`).
    fn big_h(&self, x: f64) -> f64 {
        let lx = ln(x);
        expm1_over_x((1.0 - self.theta) * lx) * lx
    }

    fn big_h_inv(&self, y: f64) -> f64 {
        // Rounding can push t just past −1, where the inverse has a pole.
        let t = (y * (1.0 - self.theta)).max(-1.0);
        exp(log1p_over_x(t) * y)
    }
}

/// `(e^x − 1)/x`, 1 at x = 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() < 1e-5 {
        1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0)))
    } else {
        (exp(x) - 1.0) / x
    }
}

/// `ln(1 + x)/x`, 1 at x = 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() < 1e-5 {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - x * 0.25))
    } else {
        ln(1.0 + x) / x
    }
}

// ln 2 split so that k·LN2_HI is exact for |k| < 2^11.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);

/// Natural logarithm in portable arithmetic, accurate to a few ulp.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    let (mut m, mut e) = (x, 0i64);
    if m < f64::MIN_POSITIVE {
        m *= (1u64 << 54) as f64;
        e -= 54;
    }
    let bits = m.to_bits();
    e += ((bits >> 52) & 0x7ff) as i64 - 1023;
    m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1023u64 << 52));
    // m in [1, 2); centre it on 1 so the series argument stays small.
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2 atanh z, z = (m−1)/(m+1), |z| ≤ 0.172: the odd series converges by 0.0295 a term.
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let mut p = 1.0 / 25.0;
    for k in (0..12).rev() {
        p = p * z2 + 1.0 / (2 * k + 1) as f64;
    }
    let ef = e as f64;
    ef * LN2_HI + (2.0 * z * p + ef * LN2_LO)
}

/// e^x in portable arithmetic, accurate to a few ulp.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.782712893384 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    // x = k ln2 + r, |r| ≤ ln2/2; e^r by Taylor to r^14 (error < 1e-18), then scale by 2^k.
    let k = (x * std::f64::consts::LOG2_E).round();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0;
    for i in (1..=14).rev() {
        p = 1.0 + p * r / i as f64;
    }
    let k = k as i64;
    // Two steps so results in the subnormal range (k < −1022) still come out.
    let half = k / 2;
    p * pow2(half) * pow2(k - half)
}

fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    fn rng(seed: u64) -> Pcg64 {
        Pcg64::seed_from_u64(seed)
    }

    #[test]
    fn portable_math_matches_libm() {
        let mut r = rng(1);
        for _ in 0..100_000 {
            let x = exp((uniform01(&mut r) - 0.5) * 1400.0);
            let rel = (ln(x) - x.ln()).abs() / x.ln().abs().max(1e-300);
            assert!(rel < 4e-16 || (ln(x) - x.ln()).abs() < 4e-16, "ln({x}) = {} vs {}", ln(x), x.ln());
            let y = (uniform01(&mut r) - 0.5) * 1400.0;
            assert!(((exp(y) - y.exp()) / y.exp()).abs() < 4e-16, "exp({y}) = {} vs {}", exp(y), y.exp());
        }
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
        assert!((ln(5e-324) - 5e-324f64.ln()).abs() < 1e-12);
        assert!(exp(-740.0) > 0.0);
    }

    #[test]
    fn normal_moments() {
        let mut r = rng(2);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| standard_normal(&mut r)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((var - 1.0).abs() < 0.015, "{var}");
        let within1 = xs.iter().filter(|x| x.abs() < 1.0).count() as f64 / n as f64;
        assert!((within1 - 0.6827).abs() < 0.005, "{within1}");
    }

    fn check_zipf(n: u64, theta: f64, head: &[f64]) {
        let z = Zipf::new(n, theta).unwrap();
        let mut r = rng(3);
        let draws = 400_000;
        let mut counts = vec![0u64; head.len()];
        for _ in 0..draws {
            let k = z.sample(&mut r);
            assert!(k < n);
            if (k as usize) < counts.len() {
                counts[k as usize] += 1;
            }
        }
        for (k, (&c, &p)) in counts.iter().zip(head).enumerate() {
            let got = c as f64 / draws as f64;
            let sd = (p * (1.0 - p) / draws as f64).sqrt();
            assert!((got - p).abs() < 5.0 * sd + 1e-4, "n={n} theta={theta} item {k}: {got} vs {p}");
        }
    }

    #[test]
    fn zipf_frequencies_match_theory() {
        for theta in [0.5, 0.99, 1.0, 1.2, 2.0, 5.0] {
            let z = Zipf::new(1000, theta).unwrap();
            let head: Vec<f64> = (0..8).map(|k| z.pmf_exact(k)).collect();
            check_zipf(1000, theta, &head);
        }
        let z = Zipf::new(3, 1.0).unwrap();
        check_zipf(3, 1.0, &[z.pmf_exact(0), z.pmf_exact(1), z.pmf_exact(2)]);
        assert_eq!(Zipf::new(1, 0.7).unwrap().sample(&mut rng(0)), 0);
    }

    #[test]
    fn zipf_huge_n_without_table() {
        // theta = 1.5 over 2^32 items: the normaliser is ζ(1.5) minus a tail of ~2/sqrt(n).
        let n = 1u64 << 32;
        let zeta = 2.612375348685488 - 2.0 / (n as f64).sqrt();
        let head: Vec<f64> = (1..=5).map(|k: u64| (k as f64).powf(-1.5) / zeta).collect();
        check_zipf(n, 1.5, &head);
        // theta = 1: normaliser is the harmonic number H_n ≈ ln n + γ.
        let hn = (n as f64).ln() + 0.5772156649015329;
        let head: Vec<f64> = (1..=5).map(|k: u64| 1.0 / k as f64 / hn).collect();
        check_zipf(n, 1.0, &head);
        let z = Zipf::new(u64::MAX, 0.8).unwrap();
        let mut r = rng(9);
        assert!((0..1000).any(|_| z.sample(&mut r) > 1 << 40));
    }

    #[test]
    fn zipf_rejects_bad_params() {
        assert!(Zipf::new(0, 1.0).is_err());
        assert!(Zipf::new(10, 0.0).is_err());
        assert!(Zipf::new(10, f64::NAN).is_err());
        assert!(Zipf::new(10, f64::INFINITY).is_err());
    }

    #[test]
    fn lognormal_sizes_mean_and_floor() {
        let mut r = rng(4);
        let v = lognormal_sizes(&mut r, 100_000, 160 * 1024, 1.0);
        assert_eq!(v.len(), 100_000);
        assert!(v.iter().all(|&s| s >= 1));
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!((mean / (160.0 * 1024.0) - 1.0).abs() < 0.02, "{mean}");
        let mut sorted = v.clone();
        sorted.sort_unstable();
        // Median of a log-normal is mean·e^(−sigma²/2).
        let median = sorted[sorted.len() / 2] as f64;
        assert!((median / (160.0 * 1024.0 * (-0.5f64).exp()) - 1.0).abs() < 0.03, "{median}");
        assert!(lognormal_sizes(&mut r, 1000, 1, 3.0).iter().all(|&s| s >= 1));
    }

    #[test]
    fn file_tree_seed_004() {
        let total = 372 * 1024 * 1024;
        let mean = 160 * 1024;
        let v = file_tree_sizes(&mut rng(5), total, mean, 1.2);
        assert_eq!(v.iter().sum::<u64>(), total);
        assert_eq!(v.len() as u64, total / mean);
        assert!(v.iter().all(|&s| s >= 1));
        let (min, max) = (*v.iter().min().unwrap(), *v.iter().max().unwrap());
        assert!(min < mean / 10 && max > mean * 10, "not spread: {min}..{max}");
        assert_eq!(v, file_tree_sizes(&mut rng(5), total, mean, 1.2));
    }

    #[test]
    fn file_tree_edges() {
        let mut r = rng(6);
        assert!(file_tree_sizes(&mut r, 0, 100, 1.0).is_empty());
        assert_eq!(file_tree_sizes(&mut r, 5, 100, 1.0), vec![5]);
        assert_eq!(file_tree_sizes(&mut r, 7, 1, 2.0), vec![1; 7]);
        assert_eq!(file_tree_sizes(&mut r, 7, 0, 2.0), vec![1; 7]);
        let v = file_tree_sizes(&mut r, 1000, 3, 4.0);
        assert_eq!((v.len(), v.iter().sum::<u64>()), (333, 1000));
        assert!(v.iter().all(|&s| s >= 1));
        let big = file_tree_sizes(&mut r, u64::MAX, u64::MAX / 4, 0.5);
        assert_eq!(big.iter().fold(0u64, |a, &b| a.checked_add(b).unwrap()), u64::MAX);
    }

    #[test]
    fn deterministic_streams() {
        // Pinned values: a change here means every scenario's numbers change.
        let mut r = rng(42);
        let z = Zipf::new(1 << 20, 0.99).unwrap();
        let a: Vec<u64> = (0..5).map(|_| z.sample(&mut r)).collect();
        let mut r = rng(42);
        let b: Vec<u64> = (0..5).map(|_| z.sample(&mut r)).collect();
        assert_eq!(a, b);
        let mut r = rng(42);
        let n1 = standard_normal(&mut r);
        let mut r = rng(42);
        assert_eq!(n1.to_bits(), standard_normal(&mut r).to_bits());
        let mut r = rng(42);
        let sizes = file_tree_sizes(&mut r, 1 << 20, 100_000, 1.0);
        assert_eq!(a, [47392, 39782, 20, 659, 0]);
        assert_eq!(n1.to_bits(), 0xbfe87ec6734035e0);
        assert_eq!(sizes, [27849, 295749, 82267, 15304, 196830, 13592, 45917, 79231, 275710, 16127]);
    }
}
