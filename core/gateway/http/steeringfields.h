#pragma once

#include <QByteArrayView>

#include <span>
#include <string_view>

namespace airlock {

/// What the request guard does with a field that steers a shared upstream.
enum class SteeringAction {
    /// Removed from the forwarded head: a field each proxy on the way sets for itself (the
    /// gateway is the proxy here and speaks for itself, so the guest's copy goes).
    Strip,
    /// The request is refused (403 `request_override`): the field names another method,
    /// target, host or upstream than the request line and Host the policy and the credential
    /// bindings checked, and dropping it would silently turn the request into another.
    Refuse,
};

/// A field that a widely used server, framework, proxy or CDN reads as the request's method,
/// URL, host, scheme, client address or upstream proxy (docs/http.md, "Fields that steer a
/// shared upstream", lists each with where it comes from). `name` is lower case; an entry
/// whose name ends in '-' is a prefix (`x-forwarded-`).
struct SteeringField
{
    std::string_view name;
    SteeringAction action;
    std::string_view steers; ///< "method", "url", "host", "scheme", "client", "route", "proxy"
    std::string_view source; ///< who honours it, for the docs and the refusal
};

/// Every entry, in the order of docs/http.md.
std::span<const SteeringField> steeringFields();

/// The entry `name` (any letter case) falls under, or nullptr.
const SteeringField *findSteeringField(QByteArrayView name);

} // namespace airlock
