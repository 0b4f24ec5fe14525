#include "core/model/sandbox.h"

#include "core/model/jsonfields.h"
#include "core/model/names.h"

#include <QJsonValue>

#include <algorithm>

namespace airlock {

namespace {

QJsonValue timeToJson(const QDateTime &time)
{
    if (!time.isValid())
        return QJsonValue(QJsonValue::Null);
    return time.toUTC().toString(Qt::ISODateWithMs);
}

Result<QDateTime> timeFromJson(const QJsonObject &object, const QString &key)
{
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull())
        return QDateTime();
    if (!value.isString())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field '%1' must be an ISO 8601 time").arg(key));
    QDateTime time = QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
    if (!time.isValid())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field '%1' must be an ISO 8601 time").arg(key));
    return time.toUTC();
}

} // namespace

QString sandboxStateName(SandboxState state)
{
    switch (state) {
    case SandboxState::Stopped:
        return QStringLiteral("stopped");
    case SandboxState::Starting:
        return QStringLiteral("starting");
    case SandboxState::Running:
        return QStringLiteral("running");
    case SandboxState::Stopping:
        return QStringLiteral("stopping");
    case SandboxState::Paused:
        return QStringLiteral("paused");
    case SandboxState::Adopting:
        return QStringLiteral("adopting");
    }
    return QStringLiteral("stopped");
}

std::optional<SandboxState> sandboxStateFromName(QStringView name)
{
    for (auto state : {SandboxState::Stopped, SandboxState::Starting, SandboxState::Running,
                       SandboxState::Stopping, SandboxState::Paused, SandboxState::Adopting}) {
        if (name == sandboxStateName(state))
            return state;
    }
    return std::nullopt;
}

QString accelerationName(Acceleration acceleration)
{
    switch (acceleration) {
    case Acceleration::Kvm:
        return QStringLiteral("kvm");
    case Acceleration::Tcg:
        return QStringLiteral("tcg");
    case Acceleration::Unknown:
        break;
    }
    return QStringLiteral("unknown");
}

Acceleration accelerationFromName(QStringView name)
{
    if (name == u"kvm")
        return Acceleration::Kvm;
    if (name == u"tcg")
        return Acceleration::Tcg;
    return Acceleration::Unknown;
}

QString bootModeName(BootMode mode)
{
    return mode == BootMode::Cold ? QStringLiteral("cold") : QStringLiteral("template");
}

std::optional<BootMode> bootModeFromName(QStringView name)
{
    if (name == u"template")
        return BootMode::Template;
    if (name == u"cold")
        return BootMode::Cold;
    return std::nullopt;
}

QString startSourceName(StartSource source)
{
    switch (source) {
    case StartSource::Boot:
        return QStringLiteral("boot");
    case StartSource::Template:
        return QStringLiteral("template");
    case StartSource::Snapshot:
        return QStringLiteral("snapshot");
    case StartSource::None:
        break;
    }
    return QStringLiteral("");
}

StartSource startSourceFromName(QStringView name)
{
    for (auto source : {StartSource::Boot, StartSource::Template, StartSource::Snapshot}) {
        if (name == startSourceName(source))
            return source;
    }
    return StartSource::None;
}

QString vmmKindName(VmmKind kind)
{
    return kind == VmmKind::Firecracker ? QStringLiteral("firecracker") : QStringLiteral("qemu");
}

std::optional<VmmKind> vmmKindFromName(QStringView name)
{
    if (name == u"qemu")
        return VmmKind::Qemu;
    if (name == u"firecracker")
        return VmmKind::Firecracker;
    return std::nullopt;
}

Result<void> SandboxSpec::validate() const
{
    AIRLOCK_TRY(validateName(name));
    AIRLOCK_TRY(validateName(image, u"image id"));
    if (vcpus < 1 || vcpus > kMaxVcpus)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("vcpus must be between 1 and %1").arg(kMaxVcpus));
    if (memoryMib < kMinMemoryMib || memoryMib > kMaxMemoryMib)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("memoryMib must be between %1 and %2")
                        .arg(kMinMemoryMib)
                        .arg(kMaxMemoryMib));
    if (labels.size() > kMaxLabels)
        return fail(ErrorKind::InvalidParams, QStringLiteral("at most %1 labels").arg(kMaxLabels));
    const auto printable = [](const QString &text) {
        return std::none_of(text.begin(), text.end(),
                            [](QChar c) { return c.category() == QChar::Other_Control; });
    };
    for (auto it = labels.begin(); it != labels.end(); ++it) {
        if (it.key().isEmpty() || it.key().size() > kMaxLabelKeyChars || !printable(it.key()))
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("label keys must be 1..%1 printable characters")
                            .arg(kMaxLabelKeyChars));
        if (it.value().size() > kMaxLabelValueChars || !printable(it.value()))
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("label '%1': values must be at most %2 printable characters")
                            .arg(it.key())
                            .arg(kMaxLabelValueChars));
    }
    return {};
}

QJsonObject SandboxSpec::labelsJson() const
{
    QJsonObject object;
    for (auto it = labels.begin(); it != labels.end(); ++it)
        object.insert(it.key(), it.value());
    return object;
}

Result<QMap<QString, QString>> SandboxSpec::labelsFromJson(const QJsonValue &value)
{
    QMap<QString, QString> out;
    if (value.isUndefined() || value.isNull())
        return out;
    if (!value.isObject())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'labels' must be an object"));
    const QJsonObject object = value.toObject();
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!it.value().isString())
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("label '%1' must be a string").arg(it.key()));
        out.insert(it.key(), it.value().toString());
    }
    return out;
}

QJsonObject SandboxSpec::toJson() const
{
    QJsonObject object {
        {QStringLiteral("name"), name},
        {QStringLiteral("vcpus"), vcpus},
        {QStringLiteral("memoryMib"), memoryMib},
        {QStringLiteral("image"), image},
        {QStringLiteral("boot"), bootModeName(boot)},
        {QStringLiteral("labels"), labelsJson()},
    };
    if (vmm)
        object.insert(QStringLiteral("vmm"), vmmKindName(*vmm));
    return object;
}

Result<SandboxSpec> SandboxSpec::fromJson(const QJsonObject &object)
{
    SandboxSpec spec;
    auto name = json::readString(object, QStringLiteral("name"));
    AIRLOCK_TRY(name);
    // The real ranges (validate() checks them again): a message naming INT_MIN..INT_MAX for
    // 1e30 vCPUs helped nobody (docs/reviews/2026-12-01-newuser-pass.md#l5).
    auto vcpus = json::readInteger(object, QStringLiteral("vcpus"), 1, kMaxVcpus, kDefaultVcpus);
    AIRLOCK_TRY(vcpus);
    auto memory = json::readInteger(object, QStringLiteral("memoryMib"), kMinMemoryMib,
                                    kMaxMemoryMib, kDefaultMemoryMib);
    AIRLOCK_TRY(memory);
    auto image = json::readString(object, QStringLiteral("image"), QStringLiteral("default"));
    AIRLOCK_TRY(image);
    auto bootName = json::readString(object, QStringLiteral("boot"), QStringLiteral("template"));
    AIRLOCK_TRY(bootName);
    const auto boot = bootModeFromName(*bootName);
    if (!boot)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'boot' must be \"template\" or \"cold\""));
    AIRLOCK_TRY_INIT(labels, labelsFromJson(object.value(QStringLiteral("labels"))));
    spec.labels = *labels;
    spec.boot = *boot;
    if (object.contains(QStringLiteral("vmm"))) {
        auto vmmName = json::readString(object, QStringLiteral("vmm"));
        AIRLOCK_TRY(vmmName);
        const auto vmm = vmmKindFromName(*vmmName);
        if (!vmm)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("field 'vmm' must be \"qemu\" or \"firecracker\""));
        spec.vmm = *vmm;
    }
    spec.name = *name;
    spec.vcpus = int(*vcpus);
    spec.memoryMib = int(*memory);
    spec.image = *image;
    return spec;
}

QJsonObject Sandbox::toJson() const
{
    QJsonObject object = spec.toJson();
    object.insert(QStringLiteral("state"), sandboxStateName(state));
    object.insert(QStringLiteral("stateReason"), stateReason);
    object.insert(QStringLiteral("acceleration"), accelerationName(acceleration));
    object.insert(QStringLiteral("accelerationWarning"), accelerationWarning);
    object.insert(QStringLiteral("createdAt"), timeToJson(createdAt));
    object.insert(QStringLiteral("startedAt"), timeToJson(startedAt));
    object.insert(QStringLiteral("vmmPid"), vmmPid);
    object.insert(QStringLiteral("startedFrom"), startSourceName(startedFrom));
    object.insert(QStringLiteral("identityWarning"), identityWarning);
    return object;
}

Result<Sandbox> Sandbox::fromJson(const QJsonObject &object)
{
    Sandbox sandbox;
    auto spec = SandboxSpec::fromJson(object);
    AIRLOCK_TRY(spec);
    sandbox.spec = *spec;
    auto stateName = json::readString(object, QStringLiteral("state"), QStringLiteral("stopped"));
    AIRLOCK_TRY(stateName);
    auto state = sandboxStateFromName(*stateName);
    if (!state)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("unknown sandbox state '%1'").arg(*stateName));
    sandbox.state = *state;
    auto reason = json::readString(object, QStringLiteral("stateReason"), QString());
    auto accel =
        json::readString(object, QStringLiteral("acceleration"), QStringLiteral("unknown"));
    auto warning = json::readString(object, QStringLiteral("accelerationWarning"), QString());
    auto created = timeFromJson(object, QStringLiteral("createdAt"));
    auto started = timeFromJson(object, QStringLiteral("startedAt"));
    auto pid = json::readInteger(object, QStringLiteral("vmmPid"), 0, INT_MAX, 0);
    auto from = json::readString(object, QStringLiteral("startedFrom"), QString());
    auto identity = json::readString(object, QStringLiteral("identityWarning"), QString());
    for (const Error *error :
         {reason ? nullptr : &reason.error(), accel ? nullptr : &accel.error(),
          warning ? nullptr : &warning.error(), created ? nullptr : &created.error(),
          started ? nullptr : &started.error(), pid ? nullptr : &pid.error(),
          from ? nullptr : &from.error(), identity ? nullptr : &identity.error()}) {
        if (error)
            return std::unexpected(*error);
    }
    sandbox.stateReason = *reason;
    sandbox.acceleration = accelerationFromName(*accel);
    sandbox.accelerationWarning = *warning;
    sandbox.createdAt = *created;
    sandbox.startedAt = *started;
    sandbox.vmmPid = *pid;
    sandbox.startedFrom = startSourceFromName(*from);
    sandbox.identityWarning = *identity;
    return sandbox;
}

} // namespace airlock
