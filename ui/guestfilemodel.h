#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonArray>
#include <QList>

namespace airlock {

/// One entry of a guest folder: a `files.list` FileInfo (docs/protocol.md, "Files"). Names and
/// link targets are untrusted guest text.
struct GuestFileInfo
{
    enum class Type { File, Directory, Symlink, Other };
    QString name;
    Type type = Type::Other;
    quint32 mode = 0; ///< permission bits
    qint64 size = 0; ///< bytes
    qint64 mtimeNs = 0; ///< since the epoch
    QString target; ///< symlinks

    static GuestFileInfo fromJson(const QJsonObject &info);
    bool isDirectory() const { return type == Type::Directory; }
};

/// The entries of one guest folder for the Files tab: name, type, size, mode, modified.
/// Folders first, then by name. Text is plain (Qt::DisplayRole only), never markup.
class GuestFileModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, TypeColumn, SizeColumn, ModeColumn, ModifiedColumn, ColumnCount };

    explicit GuestFileModel(QObject *parent = nullptr);

    /// Replaces the entries with a `files.list` answer's `entries` (depth 1).
    void setEntries(const QJsonArray &entries, bool truncated);
    void clear();
    const GuestFileInfo *entryAt(int row) const;
    /// The row of `name`, or -1.
    int rowOf(const QString &name) const;
    /// files.list said entries were left out (over its limit).
    bool isTruncated() const { return m_truncated; }

    /// "rwxr-xr-x" for 0755.
    static QString modeText(quint32 mode);
    static QString typeText(GuestFileInfo::Type type);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QList<GuestFileInfo> m_entries;
    bool m_truncated = false;
};

} // namespace airlock
